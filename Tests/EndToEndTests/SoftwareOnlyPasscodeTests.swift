import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Passcode and TPM": where only the passcode protects the key, the default
/// rules are stronger (6 characters, no simple sequence, no repeating pattern); with a TPM the
/// defaults stand, and what a policy file sets stands either way. Against the real daemon, without
/// the test harness's short-passcode file (`shortPasscodes: false`).
@Suite(.serialized) struct SoftwareOnlyPasscodeTests {
    /// A daemon with no TPM (nothing listens on port 1) or `simulator`'s, and `admin` as a policy file.
    func daemon(_ simulator: SoftwareTPM? = nil, admin: String? = nil) async throws -> DaemonProcess {
        let root = try TemporaryDirectory()
        if let admin {
            try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
            try admin.write(toFile: root.appending("admin/50-passcode.json"), atomically: true, encoding: .utf8)
        }
        return try await DaemonProcess.started(
            root: root, arguments: ["--tpm-tcti", simulator?.tcti ?? "swtpm:host=127.0.0.1,port=1"],
            shortPasscodes: false)
    }

    func refusal(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch CordonError.invalidPasscode(let reason) {
            return reason
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func withoutATPMShortSimpleAndRepeatingPasscodesAreRefused() async throws {
        let daemon = try await daemon()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        #expect(
            await refusal { try await client.initialize(passcode: "2468") }
                == "the passcode must have at least 6 characters (no TPM protects the key)")
        #expect(
            await refusal { try await client.initialize(passcode: "123456") }?.contains("too simple") == true)
        #expect(
            await refusal { try await client.initialize(passcode: "121212") }?.contains("repeating pattern") == true)
        // Nothing was stored by the refusals.
        #expect(try await client.status().state == .uninitialized)
        try await client.initialize(passcode: "worm-hole")
        try await client.unlock(passcode: "worm-hole")
        // A passcode change is held to the same rules, and the right old passcode is not counted as wrong.
        #expect(
            await refusal { try await client.changePasscode(old: "worm-hole", new: "abcabc") }?.contains(
                "repeating pattern") == true)
        #expect(try await client.status().failedAttempts == 0)
        try await client.changePasscode(old: "worm-hole", new: "tulip-7")
        await client.close()
        // The CLI shows the rule, with a hint.
        let cli = try await runCommand(
            Binaries.cordon, ["passwd", "--socket", daemon.socketPath, "--passcode-stdin"], input: "tulip-7\n1111\n")
        #expect(cli.status != 0)
        #expect(cli.stderr.contains("at least 6 characters (no TPM protects the key)"), "\(cli.stderr)")
    }

    @Test func withATPMTheDefaultsStand() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let daemon = try await daemon(simulator)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        #expect(try await client.status().keyProtection?.kind == "tpm")
        try await client.unlock(passcode: "2468")
        await client.close()
    }

    @Test func whatThePolicySetsStandsWithoutATPM() async throws {
        let daemon = try await daemon(
            admin: #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 4, "allowSimple": true}}"#)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "1212")
        #expect(try await client.status().keyProtection?.kind == "software")
        await client.close()
    }
}
