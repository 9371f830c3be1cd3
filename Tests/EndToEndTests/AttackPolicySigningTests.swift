import CordonKit
import CordonProtocol
import CordonTrust
import Foundation
import Testing

/// Attacks on signed admin policy files, as a same-user program that can put files where cordond
/// reads them would make them: a signed lenient file renamed over the base, an older signed
/// version put back (also across a restart), an expired signature, a v1 signature. Each is
/// refused with a reason naming it, and the last good policy stays in force
/// (docs/THREAT-MODEL.md, "Admin policy").
@Suite struct AttackPolicySigningTests {
    static let strict = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed", "maxChars": 10}}"#
    static let lenient = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any", "maxChars": 100000}}"#

    /// A daemon trusting one admin key (no unsigned test file), and that key's private half.
    func daemonTrustingAKey(root: TemporaryDirectory? = nil) async throws -> (DaemonProcess, String) {
        let root = try root ?? TemporaryDirectory()
        let pair = PolicySigning.generateKeyPair()
        try FileManager.default.createDirectory(atPath: root.appending("trust"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try pair.publicKey.write(toFile: root.appending("trust/admin.pub"), atomically: true, encoding: .utf8)
        try pair.privateKey.write(toFile: root.appending("admin.key"), atomically: true, encoding: .utf8)
        return (try await DaemonProcess.started(root: root, trustUnboundApps: false), pair.privateKey)
    }

    /// The admin's side: `cordon policy sign` on a file in the admin's own directory.
    func sign(
        _ daemon: DaemonProcess, _ json: String, as name: String, serial: Int, expires: String = "2099-01-01"
    ) async throws -> String {
        let directory = daemon.root.appending("signed-\(serial)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/" + name
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            Binaries.cordon,
            [
                "policy", "sign", file, "--key", daemon.root.appending("admin.key"), "--serial", "\(serial)",
                "--expires", expires,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("serial \(serial)"), "\(result.stdout)")
        return file
    }

    /// The attacker's side: copies a signed file and its signature into the admin directory as `name`.
    func install(_ file: String, as name: String, in daemon: DaemonProcess) async throws {
        let destination = daemon.adminPolicyDirectory + "/" + name
        for (from, to) in [(file + ".sig", destination + ".sig"), (file, destination)] {
            let copy = try await runCommand(URL(fileURLWithPath: "/bin/cp"), [from, to + ".tmp"])
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(rename(to + ".tmp", to) == 0)
        }
    }

    /// The status of the admin file `name` after a reload, and the policy version in force.
    func status(_ daemon: DaemonProcess, _ name: String) async throws -> (PolicySourceStatus, String) {
        let client = try await daemon.client()
        defer { Task { await client.close() } }
        let status = try await client.reloadPolicy()
        let path = daemon.adminPolicyDirectory + "/" + name
        return (try #require(status.sources.first { $0.path == path }), status.version)
    }

    @Test func aSignedLenientFileRenamedOverTheBaseIsRefused() async throws {
        let (daemon, _) = try await daemonTrustingAKey()
        defer { daemon.cleanUp() }
        let base = try await sign(daemon, Self.strict, as: "10-base.json", serial: 1)
        let lenient = try await sign(daemon, Self.lenient, as: "90-lenient.json", serial: 2)
        try await install(base, as: "10-base.json", in: daemon)
        let (applied, version) = try await status(daemon, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        try await install(lenient, as: "10-base.json", in: daemon)
        let (refused, after) = try await status(daemon, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(
            refused.problems.joined().contains("signed for the file 90-lenient.json, installed as 10-base.json"),
            "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")

        // What `cordon policy status` shows the admin.
        let shown = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "policy", "status"])
        #expect(shown.stdout.contains("90-lenient.json"), "\(shown.stdout)")
        try await daemon.stop()
    }

    @Test func anOlderSignedVersionIsRefusedAlsoAfterARestart() async throws {
        let (daemon, _) = try await daemonTrustingAKey()
        defer { daemon.cleanUp() }
        let old = try await sign(daemon, Self.lenient, as: "10-base.json", serial: 41)
        let new = try await sign(daemon, Self.strict, as: "10-base.json", serial: 42)
        try await install(old, as: "10-base.json", in: daemon)
        #expect(try await status(daemon, "10-base.json").0.status == .applied)
        try await install(new, as: "10-base.json", in: daemon)
        let (applied, version) = try await status(daemon, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        try await install(old, as: "10-base.json", in: daemon)
        let (refused, after) = try await status(daemon, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(refused.problems.joined().contains("serial 41 is lower than serial 42"), "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")

        // The highest serial is in the database: a restart does not forget it.
        try await daemon.stop()
        let restarted = try await DaemonProcess.started(root: daemon.root, trustUnboundApps: false)
        defer { restarted.cleanUp() }
        let (again, _) = try await status(restarted, "10-base.json")
        #expect(again.status == .rejected, "the old version is not applied after a restart")
        #expect(again.problems.joined().contains("serial 41 is lower than serial 42"), "\(again.problems)")
        try await install(new, as: "10-base.json", in: restarted)
        #expect(try await status(restarted, "10-base.json").0.status == .applied, "the same serial is accepted again")
        try await restarted.stop()
    }

    @Test func anExpiredSignatureIsRefused() async throws {
        let (daemon, key) = try await daemonTrustingAKey()
        defer { daemon.cleanUp() }
        let base = try await sign(daemon, Self.strict, as: "10-base.json", serial: 1)
        try await install(base, as: "10-base.json", in: daemon)
        let (applied, version) = try await status(daemon, "10-base.json")
        #expect(applied.status == .applied, "\(applied.problems)")

        // Validly signed, with a higher serial, but expired (`cordon policy sign` refuses a past date).
        let expired = daemon.root.appending("expired.json")
        try Self.lenient.write(toFile: expired, atomically: true, encoding: .utf8)
        let signature = try PolicySigning.sign(
            Data(Self.lenient.utf8), name: "10-base.json", serial: 2, expires: 1_577_836_800, privateKey: key)
        try signature.text.write(toFile: expired + ".sig", atomically: true, encoding: .utf8)
        try await install(expired, as: "10-base.json", in: daemon)
        let (refused, after) = try await status(daemon, "10-base.json")
        #expect(refused.status == .rejectedLastGoodInForce)
        #expect(refused.problems.joined().contains("expired at 2020-01-01T00:00:00Z"), "\(refused.problems)")
        #expect(after == version, "the last good policy stays in force")
        try await daemon.stop()
    }

    @Test func aVersionOneSignatureIsRefusedWhereKeysAreTrusted() async throws {
        let (daemon, _) = try await daemonTrustingAKey()
        defer { daemon.cleanUp() }
        let file = daemon.root.appending("v1.json")
        try Self.lenient.write(toFile: file, atomically: true, encoding: .utf8)
        let v1 = "cordon-policy-signature-v1 0123456789abcdef \(Data(repeating: 1, count: 64).base64EncodedString())\n"
        try v1.write(toFile: file + ".sig", atomically: true, encoding: .utf8)
        try await install(file, as: "10-base.json", in: daemon)
        let (refused, _) = try await status(daemon, "10-base.json")
        #expect(refused.status == .rejected)
        #expect(refused.problems.joined().contains("v1 signature"), "\(refused.problems)")
        try await daemon.stop()
    }
}
