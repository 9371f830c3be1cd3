import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Passcode and TPM": where only the passcode protects the key, the default
/// rules are stronger (6 characters, no simple sequence, no repeating pattern); with a TPM the
/// defaults stand, and what a policy file sets stands either way. cordond and the CLI run as an
/// ordinary user (``UserAgent``): outside test mode on a machine without a TPM, in test mode where
/// the TPM is a simulator (only test mode takes a TCTI other than the system's device).
@Suite(.serialized) struct SoftwareOnlyPasscodeTests {
    static let noPolicy = #"{"schema": "cordon.policy.v1"}"#

    /// The status `cordon status --json` prints.
    static func status(_ agent: UserAgent) async throws -> [String: Any] {
        let status = try await agent.cli(["status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    }

    /// `cordon init` with `passcode`: the reason of a refusal, or nil when it was taken.
    static func refusal(_ agent: UserAgent, initializing passcode: String) async throws -> String? {
        let result = try await agent.cli(["init", "--passcode-stdin"], input: passcode + "\n")
        if result.status == 0 { return nil }
        #expect(result.stderr.contains("hint:"), "\(result.stderr)")
        return result.stderr
    }

    @Test func withoutATPMShortSimpleAndRepeatingPasscodesAreRefused() async throws {
        let agent = try await UserAgent(policy: Self.noPolicy, initialize: false)
        defer { agent.cleanUp() }
        #expect(
            try await Self.refusal(agent, initializing: "2468")?.contains(
                "the passcode must have at least 6 characters (no TPM protects the key)") == true)
        #expect(try await Self.refusal(agent, initializing: "123456")?.contains("too simple") == true)
        #expect(try await Self.refusal(agent, initializing: "121212")?.contains("repeating pattern") == true)
        // Nothing was stored by the refusals.
        #expect(try await Self.status(agent)["state"] as? String == "uninitialized")
        #expect(try await Self.refusal(agent, initializing: "worm-hole") == nil)
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: "worm-hole\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        // A passcode change is held to the same rules, and the right old passcode is not counted as wrong.
        let pattern = try await agent.cli(["passwd", "--passcode-stdin"], input: "worm-hole\nabcabc\n")
        #expect(pattern.status != 0 && pattern.stderr.contains("repeating pattern"), "\(pattern.stderr)")
        #expect(try await Self.status(agent)["failedAttempts"] as? Int == 0)
        let changed = try await agent.cli(["passwd", "--passcode-stdin"], input: "worm-hole\ntulip-7\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        // The CLI shows the rule, with a hint.
        let short = try await agent.cli(["passwd", "--passcode-stdin"], input: "tulip-7\n1111\n")
        #expect(short.status != 0)
        #expect(short.stderr.contains("at least 6 characters (no TPM protects the key)"), "\(short.stderr)")
        #expect(short.stderr.contains("hint:"), "\(short.stderr)")
    }

    @Test func withATPMTheDefaultsStand() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await UserAgent(
            policy: Self.noPolicy, initialize: false, arguments: ["--tpm-tcti", simulator.tcti], testMode: true)
        defer { agent.cleanUp() }
        #expect(try await Self.refusal(agent, initializing: "2468") == nil)
        let protection = try await Self.status(agent)["keyProtection"] as? [String: Any]
        #expect(protection?["kind"] as? String == "tpm", "\(String(describing: protection))")
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: "2468\n").status == 0)
    }

    @Test func whatThePolicySetsStandsWithoutATPM() async throws {
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 4, "allowSimple": true}}"#,
            initialize: false)
        defer { agent.cleanUp() }
        #expect(try await Self.refusal(agent, initializing: "1212") == nil)
        let protection = try await Self.status(agent)["keyProtection"] as? [String: Any]
        #expect(protection?["kind"] as? String == "software", "\(String(describing: protection))")
    }
}
