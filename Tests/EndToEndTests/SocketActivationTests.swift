import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Socket activation end to end: the real `systemd-socket-activate` binds the socket and execs
/// cordond on the first connection; cordond serves the passed socket and never unlinks it.
@Suite struct SocketActivationTests {
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")
    }

    @Test(.enabled(if: available, "needs systemd-socket-activate (package systemd)"))
    func servesTheActivatedSocket() async throws {
        let root = try TemporaryDirectory()
        let activated = root.appending("agent.sock")
        let daemon = try await DaemonProcess.started(root: root, launcher: .socketActivate(activated))
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        #expect(try await client.status().state == .uninitialized)
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        #expect(try await client.status().state == .unlocked)
        await client.close()

        #expect(daemon.log.contains("serving the socket passed by systemd (socket activation)"))
        #expect(daemon.log.contains("socket=\(activated)"))
        #expect(
            !FileManager.default.fileExists(atPath: root.appending("run/agent.sock")),
            "an activated agent binds no socket of its own")
        #expect(try await daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: activated), "a socket it did not bind is never unlinked")
    }

    @Test(.enabled(if: available, "needs systemd-socket-activate (package systemd)"))
    func activatedSocketStillRefusesOtherUsers() async throws {
        let root = try TemporaryDirectory()
        let activated = root.appending("agent.sock")
        let daemon = try await DaemonProcess.started(root: root, launcher: .socketActivate(activated))
        defer { daemon.cleanUp() }
        // Open the directory and socket to everyone: only SO_PEERCRED stands in the way.
        chmod(root.path, 0o755)
        chmod(activated, 0o666)
        let answer = try await PeerCredentialTests().runAsNobody(socket: activated)
        let replies = try #require(answer["replies"] as? [[String: Any]])
        #expect(replies.first?["error"] as? String == "org.varlink.service.PermissionDenied")
        #expect(daemon.log.contains("connection refused: another user"))
        let client = try await daemon.client()
        #expect(try await client.status().state == .uninitialized)
        try await daemon.stop()
    }

    @Test func withoutActivationItBindsItsOwnSocket() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        #expect(!daemon.log.contains("socket activation"))
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        try await daemon.stop()
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "its own socket is removed")
    }
}
