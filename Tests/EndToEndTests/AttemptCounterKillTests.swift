import CordonStore
import Foundation
import Testing

/// The failed-attempt counter is stored before the passcode is checked, so killing the agent
/// in the middle of a check cannot give the attempt back. cordond, the CLI and the guesser run as
/// an ordinary user (``UserAgent``).
@Suite struct AttemptCounterKillTests {
    @Test func counterSurvivesKillDuringUnlock() async throws {
        // A real KDF made slow (6 s) so the check is still running when the agent is killed:
        // only test mode takes --kdf-target-ms (the real KDF stays: no --insecure-fast-kdf). 1.5 s
        // was once too short under CI's load: the check answered before the kill.
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            arguments: ["--test-mode", "--kdf-target-ms", "6000"])
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: "correct-horse-7\n").status == 0)

        async let attempt = agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Agent.Unlock", {"passcode": "wrong-guess-9"})
            print(json.dumps({"reply": error(reply) or "unlocked"}))
            """)
        let database = try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true)
        try await eventually("the counter is on disk") { try database.loadAttempts().count == 1 }
        agent.stop()

        // The check never answered: the agent died mid-derivation.
        let reply = try await attempt
        #expect(reply["reply"] as? String == "closed", "\(reply)")

        try await agent.restart()
        let status = try await agent.cli(["status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(object?["failedAttempts"] as? Int == 1, "\(status.stdout)")
        #expect(object?["state"] as? String == "lockedNoKey", "\(status.stdout)")
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: "correct-horse-7\n").status == 0)
        let after = try await agent.cli(["status", "--json"])
        #expect(
            (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])?["failedAttempts"]
                as? Int == 0)
    }

    @Test func restartedAgentStartsLockedWithoutKey() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#)
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["status"]).stdout.contains("unlocked"))
        try await agent.restart()
        #expect(try await agent.cli(["status"]).stdout.contains("lockedNoKey"))
        let withoutPasscode = try await agent.attack(
            """
            print(json.dumps({"unlock": error(call(connect(sys.argv[1]), "io.cordon.Agent.Unlock", {}))}))
            """)
        #expect(withoutPasscode["unlock"] as? String == "io.cordon.Agent.PasscodeRequired", "\(withoutPasscode)")
        let database = try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true)
        #expect(try database.integrityCheck() == "ok")
    }
}
