import CordonSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's metrics file (`--metrics-file`): written whole each time (a temporary file in the
/// same directory, then a rename), mode 0644, so node_exporter's textfile collector never reads
/// half of one. The directory must be the user's or root's and writable by no one else, and the
/// name must not be a link: another user cannot make the agent write elsewhere, or swap the file
/// under the collector (docs/THREAT-MODEL.md, "Metrics").
public struct MetricsFile: Sendable {
    /// Why the file cannot be written there.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What is wrong, naming the path.
        public var description: String
    }

    /// The file's path.
    public let path: String
    let directory: String
    let name: String
    let uid: uid_t

    /// A file at `path` (absolute), written as the user `uid`.
    public init(path: String, uid: uid_t = getuid()) throws(Refusal) {
        guard path.hasPrefix("/"), !path.hasSuffix("/") else {
            throw Refusal(description: "\(path) is not an absolute path to a file")
        }
        let url = URL(fileURLWithPath: path)
        self.path = path
        directory = url.deletingLastPathComponent().path
        name = url.lastPathComponent
        self.uid = uid
        guard name.hasSuffix(".prom") else {
            throw Refusal(
                description: "\(path) must end in .prom (node_exporter's textfile collector reads only those)")
        }
    }

    /// Checks the directory and the name now, as each write does.
    public func check() throws(Refusal) {
        let directoryFD = try openDirectory()
        close(directoryFD)
    }

    /// Writes `bytes` as the file's new contents.
    public func write(_ bytes: [UInt8]) throws(Refusal) {
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        let temporary = ".\(name).\(getpid()).tmp"
        unlinkat(directoryFD, temporary, 0)
        let fd = openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw refusal("cannot create \(directory)/\(temporary)") }
        let written = DescriptorWriter.writeAll(bytes, to: fd)
        let mode = fchmod(fd, 0o644)
        close(fd)
        guard written, mode == 0, renameat(directoryFD, temporary, directoryFD, name) == 0 else {
            let error = refusal("cannot write \(path)")
            unlinkat(directoryFD, temporary, 0)
            throw error
        }
    }

    /// The directory, opened without following a last link, checked: the user's or root's,
    /// writable by its owner only; the name, if there, a regular file.
    private func openDirectory() throws(Refusal) -> Int32 {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw refusal("cannot open the directory \(directory)") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = refusal("cannot read \(directory)")
            close(fd)
            throw error
        }
        guard info.st_uid == uid || info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            close(fd)
            throw Refusal(
                description:
                    "\(directory) is writable by another user (owner \(info.st_uid), mode \(String(info.st_mode & 0o7777, radix: 8))); the metrics file goes in a directory only you (or root) can write"
            )
        }
        var existing = stat()
        if fstatat(fd, name, &existing, AT_SYMLINK_NOFOLLOW) == 0, existing.st_mode & S_IFMT != S_IFREG {
            close(fd)
            throw Refusal(description: "\(path) exists and is not a regular file (a link is not followed)")
        }
        return fd
    }

    private func refusal(_ what: String) -> Refusal {
        Refusal(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
