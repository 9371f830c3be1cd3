import Foundation
import Testing

/// The `cordon` command line against a real `cordond`: both, and the app, are one ordinary user
/// (``UserAgent``: outside test mode, so the passcodes meet the software-only rules).
@Suite struct CLITests {
    /// A cordond run as the user, not initialized; unbound apps are trusted.
    static func agent() async throws -> UserAgent {
        try await UserAgent(policy: AttackIdentityTests.trusted, initialize: false)
    }

    func cordon(_ agent: UserAgent, _ arguments: [String], input: String? = nil) async throws -> CommandResult {
        try await agent.cli(arguments, input: input)
    }

    /// `cordon ARGUMENTS` as the user, with no agent behind `socket`.
    static func userCordon(_ arguments: [String]) async throws -> CommandResult {
        try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [Binaries.cordon.path] + arguments)
    }

    func statusJSON(_ agent: UserAgent) async throws -> [String: Any] {
        let result = try await cordon(agent, ["status", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func userJourney() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        #expect(try await statusJSON(agent)["state"] as? String == "uninitialized")

        let initialized = try await cordon(agent, ["init", "--passcode-stdin"], input: "2468-demo\n")
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(try await statusJSON(agent)["state"] as? String == "lockedNoKey")

        let again = try await cordon(agent, ["init", "--passcode-stdin"], input: "2468-demo\n")
        #expect(again.status == 5)
        #expect(again.stderr.contains("cordon: error:") && again.stderr.contains("hint:"))

        let wrong = try await cordon(agent, ["unlock", "--passcode-stdin"], input: "nope-nope\n")
        #expect(wrong.status == 4)
        #expect(wrong.stderr.contains("9"), "attempts left are shown: \(wrong.stderr)")
        #expect(wrong.stderr.contains("hint:"))

        let follower = try LineReader(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [
                Binaries.cordon.path, "--socket", agent.socketPath, "events", "--follow", "--json",
            ])
        defer { follower.stop() }
        try await eventually("the follower printed the snapshot") { follower.snapshot.count >= 1 }

        let unlocked = try await cordon(agent, ["unlock", "--passcode-stdin"], input: "2468-demo\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let human = try await cordon(agent, ["status"])
        #expect(human.stdout.contains("unlocked"))
        #expect(try await cordon(agent, ["lock"]).status == 0)
        #expect(try await statusJSON(agent)["state"] as? String == "lockedKeyHeld")
        // The text line names the state as users do, never the protocol's `lockedKeyHeld`.
        let snapshot = try await cordon(agent, ["events"])
        #expect(snapshot.stdout.contains("state=locked key=held"), "\(snapshot.stdout)")
        #expect(!snapshot.stdout.contains("lockedKeyHeld"), "\(snapshot.stdout)")
        // Within the grace only a verified managed app unlocks without the passcode; the CLI asks.
        let graceUnlock = try await cordon(agent, ["unlock", "--passcode-stdin"], input: "2468-demo\n")
        #expect(graceUnlock.status == 0, "\(graceUnlock.stderr)")
        #expect(try await cordon(agent, ["logout"]).status == 0)
        #expect(try await statusJSON(agent)["state"] as? String == "lockedNoKey")

        try await eventually("the follower saw every event") { follower.snapshot.count >= 6 }
        let kinds = try follower.snapshot.map { line -> String in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object?["kind"] as? String)
        }
        #expect(
            Array(kinds.prefix(6)) == [
                "State", "EncryptionKeyAvailable", "DidUnlock", "DidLock", "DidUnlock", "DidLock",
            ])
        try await eventually("the revocation reached the follower") {
            follower.snapshot.contains { $0.contains("EncryptionKeyUnavailable") && $0.contains("logout") }
        }

        let passwd = try await cordon(agent, ["passwd", "--passcode-stdin"], input: "2468-demo\nnew-passcode-1357\n")
        #expect(passwd.status == 0, "\(passwd.stderr)")
        let old = try await cordon(agent, ["unlock", "--passcode-stdin"], input: "2468-demo\n")
        #expect(old.status == 4)
        let new = try await cordon(agent, ["unlock", "--passcode-stdin"], input: "new-passcode-1357\n")
        #expect(new.status == 0, "\(new.stderr)")

        // An app (the notes example, run as the user) registered as com.example.cli.
        _ = try await agent.startNotes(appId: "com.example.cli")
        let apps = try await cordon(agent, ["apps", "--json"])
        #expect(apps.status == 0)
        #expect(apps.stdout.contains("com.example.cli"))

        let doctor = try await cordon(agent, ["doctor"])
        #expect(doctor.status == 0, "\(doctor.stdout)\(doctor.stderr)")

        let refused = try await cordon(agent, ["wipe"])
        #expect(refused.status == 2)
        let wiped = try await cordon(agent, ["wipe", "--yes", "--passcode-stdin"], input: "new-passcode-1357\n")
        #expect(wiped.status == 0, "\(wiped.stderr)")
        #expect(try await statusJSON(agent)["state"] as? String == "uninitialized")
    }

    @Test func agentNotRunningExitsThreeWithAHint() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let result = try await Self.userCordon(["--socket", root.appending("none.sock"), "status"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("cordon doctor"))
        let doctor = try await Self.userCordon(["--socket", root.appending("none.sock"), "doctor"])
        #expect(doctor.status == 1)
    }

    @Test func passcodeWithoutTerminalNeedsTheFlag() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let result = try await cordon(agent, ["init"], input: "2468-demo\n")
        #expect(result.status == 2)
        #expect(result.stderr.contains("--passcode-stdin"))
    }
}
