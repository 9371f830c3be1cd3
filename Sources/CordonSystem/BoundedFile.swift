import Glibc

/// Reads a file another program may have placed (a policy, a signature) without trusting what
/// it is: only a regular file is read, and never more than a limit.
///
/// The file is opened without blocking (a FIFO would otherwise wait for a writer) and without
/// becoming a controlling terminal, checked with `fstat` on the open descriptor (so a file
/// swapped after a `stat` cannot slip through), refused when it is not a regular file or when
/// it is larger than the limit, and then read with at most `limit + 1` bytes asked for, so a
/// file that grows while it is read is refused too. Symbolic links are followed: what counts
/// is the file they lead to (a link to `/dev/zero` is a character device).
public enum BoundedFile {
    /// The contents of the regular file at `path`, at most `limit` bytes.
    public static func read(_ path: String, limit: Int) throws(BoundedFileError) -> [UInt8] {
        try read(at: AT_FDCWD, path, shownAs: path, limit: limit)
    }

    /// The contents of the regular file `name` relative to the directory descriptor `directory`
    /// (`openat`), at most `limit` bytes; errors name it `shownAs`.
    public static func read(at directory: Int32, _ name: String, shownAs path: String, limit: Int)
        throws(BoundedFileError) -> [UInt8]
    {
        let descriptor = openat(directory, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path, errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(path, errno: errno) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else { throw .notARegularFile(path, kind: FileKind(mode: type)) }
        guard Int(info.st_size) <= limit else { throw .tooLarge(path, size: Int(info.st_size), limit: limit) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                // It grew since `fstat`: read on, but never past the limit.
                guard count <= limit else { throw .tooLarge(path, size: count, limit: limit) }
                bytes += [UInt8](repeating: 0, count: min(max(count, 4096), limit + 1 - count))
            }
            let got = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .unreadable(path, errno: errno) }
            if got == 0 { break }
            count += got
        }
        return Array(bytes[..<count])
    }
}

/// What a path turned out to be, when it is not a regular file.
public enum FileKind: String, Sendable, Equatable {
    case directory = "a directory"
    case fifo = "a FIFO"
    case characterDevice = "a character device"
    case blockDevice = "a block device"
    case socket = "a socket"
    case other = "not a regular file"

    init(mode: mode_t) {
        switch mode {
        case S_IFDIR: self = .directory
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        default: self = .other
        }
    }
}

/// Why a file was not read; each names the file.
public enum BoundedFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// It could not be opened or read.
    case unreadable(String, errno: Int32)
    /// It is not a regular file (after following symbolic links).
    case notARegularFile(String, kind: FileKind)
    /// It holds more than the limit.
    case tooLarge(String, size: Int, limit: Int)

    public var description: String {
        switch self {
        case .unreadable(let path, let code): return "\(path): cannot be read: \(String(cString: strerror(code)))"
        case .notARegularFile(let path, let kind):
            return "\(path): not a regular file (\(kind.rawValue)); it was not read"
        case .tooLarge(let path, let size, let limit):
            return "\(path): larger than the limit of \(limit) bytes (\(size) bytes); it was not read"
        }
    }
}
