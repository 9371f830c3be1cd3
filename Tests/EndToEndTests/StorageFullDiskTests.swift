import CordonKit
import CordonProtocol
import Foundation
import Testing

/// A full disk under an app's storage (a small tmpfs, as `FullDiskTests`): the write that does not
/// fit fails with `storageFailed` naming the full disk, and every record stored before still
/// opens. Needs root (to mount the tmpfs).
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root")) struct StorageFullDiskTests {
    @Test func aWriteOnAFullDiskFailsTypedAndLosesNothing() async throws {
        let root = try TemporaryDirectory()
        let data = root.appending("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let mount = try await runCommand(
            URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", data])
        try #require(mount.status == 0, "mount -t tmpfs: \(mount.stderr)")
        let daemon = try await DaemonProcess.started(root: root)
        defer {
            daemon.cleanUp()
            _ = umount2(data, Int32(MNT_DETACH))
            root.remove()
        }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let store = try SecureStore(app: app, dataDirectory: data)
        var stored: [String: Data] = [:]
        for index in 0..<8 {
            let value = Data("record \(index) ".utf8) + Data(repeating: UInt8(index), count: 1000)
            try await store.put("kept-\(index)", value)
            stored["kept-\(index)"] = value
        }
        let filled = FullDiskTests.fill(data + "/filler")
        print("storage full disk: wrote \(filled) bytes of filler on a 2 MiB tmpfs")
        var failure: CordonError?
        for index in 0..<64 where failure == nil {
            do {
                try await store.put("new-\(index)", Data(repeating: 0xAB, count: SecureStore.maxValueBytes))
            } catch let error as CordonError {
                failure = error
            }
        }
        let error = try #require(failure, "64 writes of 32 KiB all fit on a full 2 MiB tmpfs")
        #expect(error == .storageFailed(appId: "com.example.notes", reason: "the disk is full"), "\(error)")
        // Nothing stored before is lost or damaged, through the SDK and after freeing space.
        for (name, value) in stored { #expect(try await store.get(name) == value) }
        try FileManager.default.removeItem(atPath: data + "/filler")
        try await store.put("after", Data("room again".utf8))
        for (name, value) in stored { #expect(try await store.get(name) == value) }
        await app.close()
        await client.close()
        try await daemon.stop()
    }
}
