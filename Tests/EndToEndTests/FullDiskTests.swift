import CordonStore
import Foundation
import Testing

/// The data directory on a small tmpfs, filled up under the audit log: the agent keeps deciding
/// and enforcing, logs that audit records could not be stored, and stores them again once
/// there is room. Needs root (to mount the tmpfs, then given to the user); cordond, the CLI and the
/// clients run as an ordinary user outside test mode (``UserAgent``).
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root")) struct FullDiskTests {
    static let failureLine = "audit log write failed"

    @Test func auditLogOnAFullDisk() async throws {
        var mounted: String?
        let agent = try await UserAgent(
            policy:
                #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "pasteboard": {"copyOut": "managed"}}"#,
            initialize: false
        ) { home in
            mounted = try FullDiskTests.mountSmallData(in: home)
        }
        defer {
            agent.cleanUp()
            if let mounted { _ = umount2(mounted, Int32(MNT_DETACH)) }
        }
        let data = try #require(mounted)
        try await FaultFixtures.unlockedWithTwoFailures(agent)
        // A program of the user asking for decisions (its peer credentials the user's).
        let client = try RawVarlinkSocket(userPath: agent.socketPath)
        let denied = { FaultFixtures.isDecision(try client.call(FaultFixtures.deniedPaste), allowed: false) }

        let filled = Self.fill(data + "/filler")
        print("full disk: wrote \(filled) bytes of filler on a 2 MiB tmpfs")
        var calls = 0
        while !agent.log.contains(Self.failureLine), calls < 20_000 {
            #expect(try denied())
            calls += 1
        }
        try #require(agent.log.contains(Self.failureLine), "\(calls) denials were all stored on a full disk")
        print("full disk: the first audit write failed after \(calls) denials")
        // Reported: in GetStatus (and so `cordon status` / `cordon doctor`), and each record in the log.
        let problem = try #require(
            try await agent.status()["auditProblem"] as? [String: Any], "GetStatus does not report the failure")
        #expect((problem["unstored"] as? Int ?? 0) > 0, "\(problem)")
        #expect(agent.log.contains("unstored audit record"))
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("audit log: FAILING since"), "\(doctor.stdout)")

        // Full: decisions and enforcement go on.
        for _ in 0..<200 {
            #expect(try denied())
            #expect(FaultFixtures.isDecision(try client.call(FaultFixtures.allowedCopy), allowed: true))
        }
        // A passcode check on a full disk: it fails closed (no check without the counter stored)
        // or, while the log still has room, counts.
        let wrong = try await agent.cli(["passwd", "--passcode-stdin"], input: "wrong-horse\nother-horse\n")
        #expect(wrong.status != 0, "a wrong passcode was accepted")
        print("full disk: a wrong passcode answered \(wrong.stderr)")
        #expect((try await agent.status()["failedAttempts"] as? Int ?? 0) >= 2)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await agent.status()["state"] as? String == "lockedKeyHeld")
        // A verified managed app unlocks within the grace (CordonKit's unlockWithinGrace).
        let unlocker = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.unlocker"})
            harden()
            print(json.dumps({"unlock": error(call(s, "io.cordon.Agent.Unlock", {}))}))
            """)
        #expect(unlocker["unlock"] is NSNull, "\(unlocker)")
        #expect(try await agent.status()["state"] as? String == "unlocked")
        #expect(agent.process.isRunning)

        // Room again: new records are stored.
        try FileManager.default.removeItem(atPath: data + "/filler")
        let database = try CordonDatabase(path: data + "/cordon.sqlite", readOnly: true)
        let before = try database.auditCount()
        try await eventually(timeout: 120, "audit records are stored again") {
            _ = try denied()
            return try database.auditCount() > before
        }
        #expect(try database.integrityCheck() == "ok")
        #expect(try await agent.status()["auditProblem"] == nil, "the report outlives the failure")
        #expect(agent.log.contains("audit log writes again"))
    }

    /// Mounts a 2 MiB tmpfs, the user's, as `data/` in the user's `home` (before cordond starts);
    /// returns its path. Unmount with `umount2(path, MNT_DETACH)`.
    static func mountSmallData(in home: TemporaryDirectory) throws -> String {
        let data = home.appending("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = [
            "-t", "tmpfs", "-o", "size=2m,mode=0700,uid=\(TestUser.uid),gid=\(TestUser.gid)", "tmpfs", data,
        ]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "mount -t tmpfs failed")
        return data
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
