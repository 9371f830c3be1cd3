import Foundation
import Glibc

/// A document the agent opened itself to decide on and hand over: the canonical path
/// (`realpath`: `.`, `..` and symlinks resolved), a descriptor opened on it with `O_NOFOLLOW`
/// and checked to be a regular file with `fstat`, and the first bytes read through that
/// descriptor (docs/ARCHITECTURE.md, "Components": `DocumentsComponent` decides and hands over).
///
/// What is decided is what the descriptor holds: replacing the file at the path afterwards
/// changes nothing the receiver reads. The descriptor is closed by ``close()``.
public struct OpenedDocument: Sendable {
    /// Why a path cannot be handed over, as a sentence naming it.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The canonical path the decision is made on.
    public let canonicalPath: String
    /// The open descriptor (`O_RDONLY | O_NOFOLLOW | O_CLOEXEC`).
    public let descriptor: CInt
    /// Up to ``headLength`` bytes from the start of the file.
    public let head: [UInt8]

    /// How much of the file content detection reads.
    public static let headLength = 512

    /// The canonical form of `path`: absolute, with `.`, `..` and every symlink resolved; a
    /// refusal naming the path when it does not resolve.
    public static func canonical(_ path: String) throws(Refusal) -> String {
        guard path.hasPrefix("/") else { throw Refusal(description: "\(path) is not an absolute path") }
        guard let resolved = realpath(path, nil) else {
            throw Refusal(description: "\(path) does not resolve: \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The canonical form of a path that may not exist yet: its directory resolved (every
    /// symlink in it followed) plus its last component, which may be neither `.` nor `..`.
    public static func canonicalDestination(_ path: String) throws(Refusal) -> String {
        guard path.hasPrefix("/") else { throw Refusal(description: "\(path) is not an absolute path") }
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { throw Refusal(description: "\(path) names no file") }
        let name = String(trimmed[trimmed.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else {
            throw Refusal(description: "\(path) names no file in a directory")
        }
        let directory = try canonical(slash == trimmed.startIndex ? "/" : String(trimmed[..<slash]))
        return directory == "/" ? "/" + name : directory + "/" + name
    }

    /// Opens the file at `path` (canonicalised first) read-only without following a symlink,
    /// checks it is a regular file and reads its first bytes.
    public static func open(_ path: String) throws(Refusal) -> OpenedDocument {
        let canonicalPath = try canonical(path)
        // O_NONBLOCK: opening a FIFO must not hang the loop; fstat refuses it right after.
        let descriptor = Glibc.open(canonicalPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw Refusal(description: "\(canonicalPath) cannot be opened: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw Refusal(description: "\(canonicalPath) is not a regular file")
        }
        var head = [UInt8](repeating: 0, count: headLength)
        let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, headLength, 0) }
        guard count >= 0 else {
            Glibc.close(descriptor)
            throw Refusal(description: "\(canonicalPath) cannot be read: \(String(cString: strerror(errno)))")
        }
        head.removeLast(headLength - count)
        return OpenedDocument(canonicalPath: canonicalPath, descriptor: descriptor, head: head)
    }

    /// Closes the descriptor.
    public func close() { Glibc.close(descriptor) }
}
