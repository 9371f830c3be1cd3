import Foundation
import Testing

/// Socket activation end to end: the real `systemd-socket-activate` binds the socket and execs
/// cordond on the first connection; cordond serves the passed socket and never unlinks it. cordond,
/// the launcher and the CLI run as an ordinary user outside test mode (``UserAgent``), as
/// systemd --user would run them.
@Suite struct SocketActivationTests {
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")
    }

    static let policy = #"{"schema": "cordon.policy.v1"}"#

    @Test(.enabled(if: available, "needs systemd-socket-activate (package systemd)"))
    func servesTheActivatedSocket() async throws {
        let directory = try Self.socketDirectory()
        defer { directory.remove() }
        let activated = directory.appending("agent.sock")
        let agent = try await UserAgent(policy: Self.policy, activatedSocket: activated)
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["status"]).stdout.contains("unlocked"))
        #expect(agent.log.contains("serving the socket passed by systemd (socket activation)"))
        #expect(agent.log.contains("socket=\(activated)"))
        #expect(
            !FileManager.default.fileExists(atPath: agent.home.appending("run/agent.sock")),
            "an activated agent binds no socket of its own")
        #expect(agent.terminate() == 0)
        #expect(FileManager.default.fileExists(atPath: activated), "a socket it did not bind is never unlinked")
    }

    @Test(.enabled(if: available, "needs systemd-socket-activate (package systemd)"))
    func activatedSocketStillRefusesOtherUsers() async throws {
        let directory = try Self.socketDirectory()
        defer { directory.remove() }
        let activated = directory.appending("agent.sock")
        let agent = try await UserAgent(policy: Self.policy, initialize: false, activatedSocket: activated)
        defer { agent.cleanUp() }
        // Open the directory and socket to everyone: only SO_PEERCRED stands in the way.
        chmod(directory.path, 0o755)
        chmod(activated, 0o666)
        let answer = try await PeerCredentialTests().runAsNobody(socket: activated)
        let replies = try #require(answer["replies"] as? [[String: Any]])
        #expect(replies.first?["error"] as? String == "org.varlink.service.PermissionDenied")
        #expect(agent.log.contains("connection refused: another user"))
        #expect(try await agent.cli(["status"]).stdout.contains("uninitialized"))
    }

    @Test func withoutActivationItBindsItsOwnSocket() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        #expect(!agent.log.contains("socket activation"))
        #expect(FileManager.default.fileExists(atPath: agent.socketPath))
        #expect(agent.terminate() == 0)
        #expect(!FileManager.default.fileExists(atPath: agent.socketPath), "its own socket is removed")
    }

    /// A 0700 directory of the user's for the activated socket (systemd --user's runtime directory).
    static func socketDirectory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        guard chown(directory.path, uid_t(TestUser.uid) ?? 0, gid_t(TestUser.gid) ?? 0) == 0 else {
            directory.remove()
            throw CocoaError(.fileWriteNoPermission)
        }
        return directory
    }
}
