import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `BoundedFile`: regular files only, never more than the limit, each refusal naming the file.
@Suite struct BoundedFileTests {
    let root = "/tmp/cordon-bounded-" + UUID().uuidString.prefix(8).lowercased()

    init() throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    @Test func readsARegularFileUpToTheLimit() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/p.json"
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path, limit: 10) == Array("0123456789".utf8))
        #expect(throws: BoundedFileError.tooLarge(path, size: 10, limit: 9)) { try BoundedFile.read(path, limit: 9) }
        let empty = root + "/empty.json"
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        #expect(try BoundedFile.read(empty, limit: 10).isEmpty)
    }

    @Test func anOversizedFileIsRefusedFromItsSize() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/huge.json"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 1 << 30) == 0)  // sparse: 1 GiB that takes no disk
        #expect(throws: BoundedFileError.tooLarge(path, size: 1 << 30, limit: 1 << 20)) {
            try BoundedFile.read(path, limit: 1 << 20)
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/fifo.json"
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: BoundedFileError.notARegularFile(path, kind: .fifo)) { try BoundedFile.read(path, limit: 100) }
    }

    @Test func aLinkToADeviceOrADirectoryIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let zero = root + "/zero.json"
        try FileManager.default.createSymbolicLink(atPath: zero, withDestinationPath: "/dev/zero")
        #expect(throws: BoundedFileError.notARegularFile(zero, kind: .characterDevice)) {
            try BoundedFile.read(zero, limit: 100)
        }
        #expect(throws: BoundedFileError.notARegularFile(root, kind: .directory)) {
            try BoundedFile.read(root, limit: 100)
        }
    }

    @Test func aLinkToARegularFileIsRead() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let target = root + "/target"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: target))
        let link = root + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try BoundedFile.read(link, limit: 10) == Array("{}".utf8))
    }

    @Test func aMissingFileNamesTheFileAndTheReason() {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/missing.json"
        #expect(throws: BoundedFileError.unreadable(path, errno: ENOENT)) { try BoundedFile.read(path, limit: 10) }
        #expect(
            BoundedFileError.unreadable(path, errno: ENOENT).description
                == "\(path): cannot be read: No such file or directory")
        #expect(
            BoundedFileError.notARegularFile(path, kind: .fifo).description
                == "\(path): not a regular file (a FIFO); it was not read")
    }
}
