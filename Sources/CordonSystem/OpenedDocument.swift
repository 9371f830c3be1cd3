import CCordonLinux
import Foundation
import Glibc

/// A document the agent took to decide on and hand over: the file the sender's path names, resolved
/// in the sender's own view (``SenderView``: its root, no pseudo-filesystem, a regular file), and
/// copied into a sealed snapshot — a `memfd` no one can write, shrink or grow — whose bytes the
/// type is detected on and which is what the receiver gets (docs/ARCHITECTURE.md, "Components":
/// `DocumentsComponent` decides and hands over).
///
/// What is decided is what the snapshot holds: rewriting the sender's file in place, or replacing
/// the file at the path, afterwards changes nothing the receiver reads. The descriptor is closed by
/// ``close()``.
public struct OpenedDocument: Sendable {
    /// Why a path cannot be handed over, as a sentence naming it.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The canonical path (in the sender's view) the decision is made on.
    public let canonicalPath: String
    /// The sealed snapshot (a `memfd`, `F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`).
    public let descriptor: CInt
    /// The snapshot's size in bytes.
    public let size: Int
    /// The bytes of data the snapshot holds (its holes excluded): what it costs in memory.
    public let dataBytes: Int
    /// Up to ``headLength`` bytes from the start of the snapshot.
    public let head: [UInt8]
    /// Up to ``tailLength`` bytes from the end of the snapshot (where ZIP readers look for the
    /// central directory and PDF readers for the trailer).
    public let tail: [UInt8]

    /// How much of the start content detection reads: PDF readers accept the header anywhere in
    /// the first KiB.
    public static let headLength = 1024
    /// How much of the end content detection reads: a ZIP's end-of-central-directory record (22
    /// bytes) with the longest comment (65,535).
    public static let tailLength = 65_557
    /// The most file data (holes excluded) a snapshot holds: 256 MiB. A snapshot's pages are the
    /// agent's memory (shmem) until the receiver is done with it (docs/PERFORMANCE.md,
    /// "Document hand-over").
    public static let maximumDataBytes = 256 << 20

    /// Resolves `path` in `view`, copies the file into a sealed snapshot and reads its first and
    /// last bytes from the snapshot; the file itself is closed before this returns.
    public static func open(_ path: String, in view: SenderView) throws(Refusal) -> OpenedDocument {
        let file = try view.resolve(path)
        defer { Glibc.close(file.descriptor) }
        let size = Int(file.status.st_size)
        // What the file says it occupies: refused before anything is copied.
        guard Int(file.status.st_blocks) * 512 <= maximumDataBytes else {
            throw tooLarge(file.canonicalPath)
        }
        var copied: Int64 = 0
        let snapshot = cordon_document_snapshot(file.descriptor, Int64(size), Int64(maximumDataBytes), &copied)
        guard snapshot >= 0 else {
            if snapshot == -EFBIG { throw tooLarge(file.canonicalPath) }
            throw Refusal(
                description: "\(file.canonicalPath) cannot be copied: \(String(cString: strerror(-snapshot)))")
        }
        let head = read(snapshot, at: 0, count: min(headLength, size))
        let tailCount = min(tailLength, size)
        let tail = read(snapshot, at: size - tailCount, count: tailCount)
        return OpenedDocument(
            canonicalPath: file.canonicalPath, descriptor: snapshot, size: size, dataBytes: Int(copied), head: head,
            tail: tail)
    }

    /// The seals every snapshot carries: `F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`.
    public static var snapshotSeals: CInt { cordon_document_seals() }

    /// The seals of the memfd `descriptor` (`F_GET_SEALS`), or nil when it has none to tell.
    public static func seals(of descriptor: CInt) -> CInt? {
        let seals = cordon_memfd_seals(descriptor)
        return seals < 0 ? nil : seals
    }

    static func tooLarge(_ path: String) -> Refusal {
        Refusal(
            description: "\(path) holds more than \(maximumDataBytes >> 20) MiB of data, the most a document may")
    }

    /// Up to `count` bytes at `offset` of `descriptor`.
    static func read(_ descriptor: CInt, at offset: Int, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { pread(descriptor, $0 + done, count - done, offset + done) } ?? -1
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        bytes.removeLast(count - done)
        return bytes
    }

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

    /// Closes the descriptor.
    public func close() { Glibc.close(descriptor) }
}
