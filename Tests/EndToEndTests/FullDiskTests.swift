import CordonKit
import CordonProtocol
import CordonStore
import Foundation
import Testing

/// The data directory on a small tmpfs, filled up under the audit log: the agent keeps deciding
/// and enforcing, logs that audit records could not be stored, and stores them again once
/// there is room. Needs root (to mount the tmpfs).
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root")) struct FullDiskTests {
    static let failureLine = "audit log write failed"

    @Test func auditLogOnAFullDisk() async throws {
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
        try FaultFixtures.write(FaultFixtures.denyPastes, to: daemon.adminPolicyDirectory + "/10-deny.json")
        try await FaultFixtures.unlockedWithTwoFailures(daemon)
        let client = try await daemon.client()
        defer { Task { await client.close() } }
        _ = try await client.reloadPolicy()

        let filled = Self.fill(data + "/filler")
        print("full disk: wrote \(filled) bytes of filler on a 2 MiB tmpfs")
        var calls = 0
        while !daemon.log.contains(Self.failureLine), calls < 20_000 {
            let decision = try await client.check(action: .pasteboardPaste, target: "com.example.other")
            #expect(!decision.allowed)
            calls += 1
        }
        try #require(daemon.log.contains(Self.failureLine), "\(calls) denials were all stored on a full disk")
        print("full disk: the first audit write failed after \(calls) denials")
        // Reported: in GetStatus (and so `cordon status` / `cordon doctor`), and each record in the log.
        let problem = try #require(try await client.status().auditProblem, "GetStatus does not report the failure")
        #expect(problem.unstored > 0)
        #expect(daemon.log.contains("unstored audit record"))
        let doctor = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "doctor"])
        #expect(doctor.stdout.contains("audit log: FAILING since"), "\(doctor.stdout)")

        // Full: decisions and enforcement go on.
        for _ in 0..<200 {
            #expect(!(try await client.check(action: .pasteboardPaste, target: "com.example.other").allowed))
            #expect(try await client.check(action: .pasteboardCopy).allowed)
        }
        // A passcode check on a full disk: it fails closed (no check without the counter stored)
        // or, while the log still has room, counts.
        do {
            try await client.changePasscode(old: "wrong", new: "other-horse")
            Issue.record("a wrong passcode was accepted")
        } catch {
            print("full disk: a wrong passcode answered \(error)")
        }
        #expect(try await client.status().failedAttempts >= 2)
        try await client.lock()
        #expect(try await client.status().state == .lockedKeyHeld)
        let unlocker = try await CordonApp.connect(appId: "com.example.unlocker", socketPath: daemon.socketPath)
        try await unlocker.unlockWithinGrace()
        await unlocker.close()
        #expect(try await client.status().state == .unlocked)
        #expect(daemon.process.isRunning)

        // Room again: new records are stored.
        try FileManager.default.removeItem(atPath: data + "/filler")
        let database = try CordonDatabase(path: daemon.databasePath, readOnly: true)
        let before = try database.auditCount()
        try await eventually(timeout: 120, "audit records are stored again") {
            _ = try await client.check(action: .pasteboardPaste, target: "com.example.other")
            return try database.auditCount() > before
        }
        #expect(try database.integrityCheck() == "ok")
        #expect(try await client.status().auditProblem == nil, "the report outlives the failure")
        #expect(daemon.log.contains("audit log writes again"))
        try await daemon.stop()
    }

    /// Writes `path` until the file system is full; returns the bytes written.
    static func fill(_ path: String) -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { return 0 }
        defer { try? handle.close() }
        var written = 0
        for size in [1 << 16, 1 << 12, 1 << 9, 1] {
            let chunk = Data(repeating: 0x55, count: size)
            while (try? handle.write(contentsOf: chunk)) != nil { written += size }
        }
        return written
    }
}
