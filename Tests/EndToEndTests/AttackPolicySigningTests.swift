import CordonProtocol
import CordonTrust
import Foundation
import Testing

/// Attacks on signed admin policy files, as a same-user program that can put files where cordond
/// reads them would make them: a signed lenient file renamed over the base, an older signed
/// version put back (also across a restart), an expired signature, a v1 signature. Each is
/// refused with a reason naming it, and the last good policy stays in force
/// (docs/THREAT-MODEL.md, "Admin policy"). cordond and the CLI run as an ordinary user outside
/// test mode (``UserAgent``); the admin directory is root's, so the files are put there by the
/// test process, as whatever could write it (a sync tool, a careless admin) would.
@Suite struct AttackPolicySigningTests {
    static let strict = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed", "maxChars": 10}}"#
    static let lenient = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any", "maxChars": 100000}}"#

    /// An agent trusting one admin key (no unsigned file), and that key's private half (in root's
    /// directory, beside the admin policy directory).
    func agentTrustingAKey() async throws -> (UserAgent, String) {
        let pair = PolicySigning.generateKeyPair()
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
        do {
            try FileManager.default.removeItem(atPath: agent.system.appending("admin/10-apps.json"))
            try pair.publicKey.write(
                toFile: agent.system.appending("trust/admin.pub"), atomically: true, encoding: .utf8)
            try pair.privateKey.write(toFile: agent.system.appending("admin.key"), atomically: true, encoding: .utf8)
            // The trust store is read at start.
            try await agent.restart()
        } catch {
            agent.cleanUp()
            throw error
        }
        return (agent, pair.privateKey)
    }

    /// The admin's side: `cordon policy sign` on a file in the admin's own directory.
    func sign(
        _ agent: UserAgent, _ json: String, as name: String, serial: Int, expires: String = "2099-01-01"
    ) async throws -> String {
        let directory = agent.system.appending("signed-\(serial)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/" + name
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            Binaries.cordon,
            [
                "policy", "sign", file, "--key", agent.system.appending("admin.key"), "--serial", "\(serial)",
                "--expires", expires,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("serial \(serial)"), "\(result.stdout)")
        return file
    }

    /// Copies a signed file and its signature into the admin directory as `name`.
    func install(_ file: String, as name: String, in agent: UserAgent) async throws {
        let destination = agent.system.appending("admin/" + name)
        for (from, to) in [(file + ".sig", destination + ".sig"), (file, destination)] {
            let copy = try await runCommand(URL(fileURLWithPath: "/bin/cp"), [from, to + ".tmp"])
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(rename(to + ".tmp", to) == 0)
        }
    }

    /// The status of the admin file `name` after a reload the user asks for, and the policy
    /// version in force.
    func status(_ agent: UserAgent, _ name: String) async throws -> (PolicySourceStatus, String) {
        let reload = try await agent.cli(["policy", "reload", "--json"])
        let status = try JSONDecoder().decode(PolicyStatus.self, from: Data(reload.stdout.utf8))
        let path = agent.system.appending("admin/" + name)
        return (try #require(status.sources.first { $0.path == path }, "\(reload.stdout)"), status.version)
    }

    @Test func aSignedLenientFileRenamedOverTheBaseIsRefused() async throws {
        let (agent, _) = try await agentTrustingAKey()
        defer { agent.cleanUp() }
        let base = try await sign(agent, Self.strict, as: "10-base.json", serial: 1)
        let lenient = try await sign(agent, Self.lenient, as: "90-lenient.json", serial: 2)
        try await install(base, as: "10-base.json", in: agent)
        let (applied, version) = try await status(agent, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        try await install(lenient, as: "10-base.json", in: agent)
        let (refused, after) = try await status(agent, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(
            refused.problems.joined().contains("signed for the file 90-lenient.json, installed as 10-base.json"),
            "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")

        // What `cordon policy status` shows the admin.
        let shown = try await agent.cli(["policy", "status"])
        #expect(shown.stdout.contains("90-lenient.json"), "\(shown.stdout)")
    }

    @Test func anOlderSignedVersionIsRefusedAlsoAfterARestart() async throws {
        let (agent, _) = try await agentTrustingAKey()
        defer { agent.cleanUp() }
        let old = try await sign(agent, Self.lenient, as: "10-base.json", serial: 41)
        let new = try await sign(agent, Self.strict, as: "10-base.json", serial: 42)
        try await install(old, as: "10-base.json", in: agent)
        #expect(try await status(agent, "10-base.json").0.status == .applied)
        try await install(new, as: "10-base.json", in: agent)
        let (applied, version) = try await status(agent, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        try await install(old, as: "10-base.json", in: agent)
        let (refused, after) = try await status(agent, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(refused.problems.joined().contains("serial 41 is lower than serial 42"), "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")

        // The highest serial is in the database: a restart does not forget it.
        try await agent.restart()
        let (again, _) = try await status(agent, "10-base.json")
        #expect(again.status == .rejected, "the old version is not applied after a restart")
        #expect(again.problems.joined().contains("serial 41 is lower than serial 42"), "\(again.problems)")
        try await install(new, as: "10-base.json", in: agent)
        #expect(try await status(agent, "10-base.json").0.status == .applied, "the same serial is accepted again")
    }

    @Test func anExpiredSignatureIsRefused() async throws {
        let (agent, key) = try await agentTrustingAKey()
        defer { agent.cleanUp() }
        let base = try await sign(agent, Self.strict, as: "10-base.json", serial: 1)
        try await install(base, as: "10-base.json", in: agent)
        let (applied, version) = try await status(agent, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        // Validly signed, with a higher serial, but expired (`cordon policy sign` refuses a past date).
        let expired = agent.system.appending("expired.json")
        try Self.lenient.write(toFile: expired, atomically: true, encoding: .utf8)
        let signature = try PolicySigning.sign(
            Data(Self.lenient.utf8), name: "10-base.json", serial: 2, expires: 1_577_836_800, privateKey: key)
        try signature.text.write(toFile: expired + ".sig", atomically: true, encoding: .utf8)
        try await install(expired, as: "10-base.json", in: agent)
        let (refused, after) = try await status(agent, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(refused.problems.joined().contains("expired at 2020-01-01T00:00:00Z"), "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")
    }

    @Test func aVersionOneSignatureIsRefusedWhereKeysAreTrusted() async throws {
        let (agent, _) = try await agentTrustingAKey()
        defer { agent.cleanUp() }
        let file = agent.system.appending("v1.json")
        try Self.lenient.write(toFile: file, atomically: true, encoding: .utf8)
        let v1 = "cordon-policy-signature-v1 0123456789abcdef \(Data(repeating: 1, count: 64).base64EncodedString())\n"
        try v1.write(toFile: file + ".sig", atomically: true, encoding: .utf8)
        try await install(file, as: "10-base.json", in: agent)
        let (refused, _) = try await status(agent, "10-base.json")
        #expect(refused.status == .rejected)
        #expect(refused.problems.joined().contains("v1 signature"), "\(refused.problems)")
    }
}
