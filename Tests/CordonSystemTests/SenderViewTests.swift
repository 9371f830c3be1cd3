import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `SenderView`: a path resolved in the sender's root, one component at a time, never into a
/// pseudo-filesystem nor above the root, and only a regular file opened (docs/THREAT-MODEL.md,
/// "Documents").
@Suite struct SenderViewTests {
    let root = "/tmp/cordon-view-" + UUID().uuidString.prefix(8).lowercased()

    init() throws {
        try FileManager.default.createDirectory(atPath: root + "/docs/sub", withIntermediateDirectories: true)
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: root + "/docs/notes.txt"))
    }

    /// A view whose root is `path`.
    static func view(_ path: String) throws -> SenderView {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(descriptor >= 0)
        return SenderView(adoptingRoot: descriptor)
    }

    /// The refusal `resolve` throws for `path`, or nil when it resolves.
    static func refusal(_ view: SenderView, _ path: String) -> String? {
        do {
            let file = try view.resolve(path)
            close(file.descriptor)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func dotsAndLinksResolveInsideTheRoot() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let view = try Self.view(root)
        try FileManager.default.createSymbolicLink(atPath: root + "/docs/link.txt", withDestinationPath: "notes.txt")
        // An absolute link means the sender's root, not the agent's.
        try FileManager.default.createSymbolicLink(atPath: root + "/docs/abs", withDestinationPath: "/docs/sub")
        try Data("deep\n".utf8).write(to: URL(fileURLWithPath: root + "/docs/sub/deep.txt"))
        for (path, canonical) in [
            ("/docs/./sub/../notes.txt", "/docs/notes.txt"), ("/docs/link.txt", "/docs/notes.txt"),
            ("/docs/abs/deep.txt", "/docs/sub/deep.txt"), ("/../../../docs/notes.txt", "/docs/notes.txt"),
            ("/docs/abs/../../../../docs/notes.txt", "/docs/notes.txt"),
        ] {
            let file = try view.resolve(path)
            defer { close(file.descriptor) }
            #expect(file.canonicalPath == canonical, "\(path)")
            #expect(file.status.st_mode & S_IFMT == S_IFREG)
        }
        // `..` never leads above the root: the real /etc is not reached from it.
        #expect(Self.refusal(view, "/../etc/passwd")?.contains("does not resolve") == true)
    }

    @Test func procSysAndDevicesAreRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let system = try Self.view("/")
        for path in ["/proc/self/maps", "/proc/self/smaps", "/proc/1/status", "/sys/kernel/uevent_seqnum"] {
            let refusal = Self.refusal(system, path)
            #expect(refusal?.contains("pseudo-filesystem") == true, "\(path): \(refusal ?? "resolved")")
        }
        #expect(
            Self.refusal(system, "/proc/self/maps")
                == "/proc/self/maps is not a document: /proc is on procfs, a pseudo-filesystem")
        #expect(Self.refusal(system, "/dev/null") == "/dev/null is not a regular file")
        // `/dev/stdin` is a link into /proc/self/fd.
        #expect(Self.refusal(system, "/dev/stdin")?.contains("/proc is on procfs") == true)
        // A link to /proc/self/smaps under an innocent name, in the sender's root.
        try FileManager.default.createSymbolicLink(
            atPath: root + "/docs/report.txt", withDestinationPath: "/proc/self/smaps")
        let view = try Self.view(root)
        // In a root without /proc the link leads nowhere; in the system's root, to procfs.
        #expect(Self.refusal(view, "/docs/report.txt")?.contains("does not resolve") == true)
        #expect(Self.refusal(system, root + "/docs/report.txt")?.contains("/proc is on procfs") == true)
    }

    @Test func onlyRegularFilesAreOpened() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let view = try Self.view(root)
        #expect(mkfifo(root + "/docs/fifo", 0o600) == 0)
        #expect(Self.refusal(view, "/docs/fifo") == "/docs/fifo is not a regular file")
        #expect(Self.refusal(view, "/docs") == "/docs is not a regular file")
        #expect(Self.refusal(view, "/") == "/ is not a regular file")
        #expect(Self.refusal(view, "/docs/notes.txt/x")?.contains("Not a directory") == true)
        #expect(Self.refusal(view, "docs/notes.txt") == "docs/notes.txt is not an absolute path")
        try FileManager.default.createSymbolicLink(atPath: root + "/docs/loop", withDestinationPath: "loop")
        #expect(Self.refusal(view, "/docs/loop")?.contains("too many levels of symbolic links") == true)
    }

    @Test func theSnapshotIsSealedAndKeepsTheDecidedBytes() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let view = try Self.view(root)
        let document = try OpenedDocument.open("/docs/notes.txt", in: view)
        defer { document.close() }
        #expect(document.head == Array("notes\n".utf8))
        #expect(OpenedDocument.seals(of: document.descriptor) == OpenedDocument.snapshotSeals)
        // Rewritten in place after the decision: the snapshot does not change.
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/docs/notes.txt"))
        try file.write(contentsOf: Data("%PDF-1".utf8))
        try file.close()
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { pread(document.descriptor, $0.baseAddress, 64, 0) }
        #expect(Array(bytes.prefix(max(count, 0))) == Array("notes\n".utf8))
        // Nobody can write to it.
        #expect(pwrite(document.descriptor, "x", 1, 0) == -1 && errno == EPERM)
        #expect(ftruncate(document.descriptor, 0) == -1 && errno == EPERM)
    }

    @Test func aSparseFileCostsNoMemoryAndTooMuchDataIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let view = try Self.view(root)
        let sparse = root + "/docs/sparse.bin"
        #expect(FileManager.default.createFile(atPath: sparse, contents: Data("%PDF-1.7\n".utf8)))
        #expect(truncate(sparse, 2 << 30) == 0)
        let document = try OpenedDocument.open("/docs/sparse.bin", in: view)
        defer { document.close() }
        #expect(document.size == 2 << 30)
        #expect(document.head.starts(with: Array("%PDF-1.7\n".utf8)))
        var status = stat()
        #expect(fstat(document.descriptor, &status) == 0)
        #expect(status.st_size == 2 << 30)
        #expect(Int(status.st_blocks) * 512 <= 1 << 20, "the holes stay holes: \(status.st_blocks) blocks")
        // Allocated data beyond the limit is refused before anything is copied.
        let dense = root + "/docs/dense.bin"
        let descriptor = open(dense, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(posix_fallocate(descriptor, 0, off_t(OpenedDocument.maximumDataBytes + (1 << 20))) == 0)
        close(descriptor)
        #expect(throws: OpenedDocument.Refusal.self) { try OpenedDocument.open("/docs/dense.bin", in: view) }
    }

    @Test func aProcessRootIsOpenedPinnedToThatProcess() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        // This process's root: the system's, where /proc is procfs.
        let own = try SenderView(pid: getpid(), pidfd: Pidfd(pid: getpid()))
        #expect(Self.refusal(own, root + "/docs/notes.txt") == nil)
        #expect(Self.refusal(own, "/proc/self/maps")?.contains("/proc is on procfs") == true)
        // A process that has exited, found through a recycled pid, is refused.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/cat")
        let input = Pipe()
        child.standardInput = input
        try child.run()
        let pidfd = try #require(Pidfd(pid: child.processIdentifier))
        try input.fileHandleForWriting.close()
        child.waitUntilExit()
        #expect(throws: OpenedDocument.Refusal.self) { try SenderView(pid: getpid(), pidfd: pidfd) }
    }
}
