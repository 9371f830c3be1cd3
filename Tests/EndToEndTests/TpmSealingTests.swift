import CordonKit
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Passcode and TPM": the master key's wrapping needs a secret a TPM 2.0
/// unseals only with the passcode, so the TPM's dictionary-attack lockout limits guesses and a copy
/// of the database is useless elsewhere. Against the real daemon and a TPM simulator (swtpm), with
/// `tpm2-tools` as the reference.
@Suite(.serialized) struct TpmSealingTests {
    /// A daemon whose key is sealed by `simulator`, with `admin` as an extra admin policy file.
    func daemon(
        _ simulator: SoftwareTPM?, root: TemporaryDirectory? = nil, admin: String? = nil, arguments: [String] = []
    ) async throws -> DaemonProcess {
        let root = try root ?? TemporaryDirectory()
        if let admin {
            try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
            try admin.write(toFile: root.appending("admin/50-tpm.json"), atomically: true, encoding: .utf8)
        }
        // Nothing listens on port 1: no TPM at all.
        let tcti = simulator?.tcti ?? "swtpm:host=127.0.0.1,port=1"
        return try await DaemonProcess.started(
            root: root, arguments: ["--tpm-tcti", tcti, "--backoff-base-seconds", "0"] + arguments)
    }

    func expectError(_ expected: (CordonError) -> Bool, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("no error")
        } catch let error as CordonError {
            #expect(expected(error), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func initAndUnlockGoThroughTheTPMAndAWrongPasscodeCountsInIt() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let daemon = try await daemon(simulator)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        // The stored record names its protection and holds the TPM object, not the secret.
        let record = try #require(try CordonDatabase(path: daemon.databasePath, readOnly: true).loadWrappedKey())
        #expect(record.protection == .tpm)
        #expect(record.hardware?.privateBlob.isEmpty == false)
        try await client.unlock(passcode: "2468")
        #expect(try await client.status().state == .unlocked)
        try await client.lock()
        await expectError({ if case .wrongPasscode = $0 { true } else { false } }) {
            try await client.changePasscode(old: "1357", new: "9753")
        }
        // The TPM counted the wrong passcode; the agent reports the TPM's own numbers.
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 1)
        let protection = try #require(try await client.status().keyProtection)
        #expect(protection.kind == "tpm")
        #expect(protection.attemptsLeft == (protection.maxFailures ?? 0) - 1)
        // A passcode change re-seals: a new TPM object under the new passcode.
        try await client.changePasscode(old: "2468", new: "9753")
        let resealed = try #require(try CordonDatabase(path: daemon.databasePath, readOnly: true).loadWrappedKey())
        #expect(resealed.hardware?.privateBlob != record.hardware?.privateBlob)
        await client.close()
    }

    @Test func theDatabaseCopiedToAnotherTPMDoesNotUnlockWithTheRightPasscode() async throws {
        let first = try SoftwareTPM()
        defer { first.stop() }
        let second = try SoftwareTPM()
        defer { second.stop() }
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let original = try await daemon(first, root: root)
        try await original.client().initialize(passcode: "2468")
        try await original.stop()
        // The same database, another machine's TPM.
        let moved = try await daemon(second, root: root)
        defer { moved.cleanUp() }
        let client = try await moved.client()
        await expectError({ if case .hardwareKeyRejected = $0 { true } else { false } }) {
            try await client.unlock(passcode: "2468")
        }
        #expect(try await client.status().state == .lockedNoKey)
        await client.close()
    }

    @Test func repeatedWrongPasscodesTriggerTheTPMLockoutAndTheAgentReportsIt() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        try simulator.setLockout(maxTries: 3)
        let daemon = try await daemon(simulator, arguments: ["--max-attempts", "100"])
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        for _ in 0..<3 {
            await expectError({ if case .wrongPasscode = $0 { true } else { false } }) {
                try await client.unlock(passcode: "0000")
            }
        }
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 3)
        // Even the right passcode is refused now, with the TPM's retry time.
        await expectError({ $0 == .hardwareLockedOut(retryAfterSeconds: 600) }) {
            try await client.unlock(passcode: "2468")
        }
        let protection = try #require(try await client.status().keyProtection)
        #expect(protection.inLockout == true)
        #expect(protection.attemptsLeft == 0)
        #expect(protection.retryAfterSeconds == 600)
        let status = try await runCommand(Binaries.cordon, ["status", "--socket", daemon.socketPath])
        #expect(status.stdout.contains("LOCKED OUT"), "\(status.stdout)")
        await client.close()
    }

    @Test func aPCRBoundSealFailsAfterThePCRIsExtended() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let daemon = try await daemon(
            simulator, admin: #"{"schema": "cordon.policy.v1", "passcode": {"pcrs": [16]}}"#,
            arguments: ["--discard-key-on-lock", "--reauth-grace", "0"])
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        #expect(try await client.status().keyProtection?.kind == "tpm+pcrs")
        try await client.unlock(passcode: "2468")
        try await client.lock()
        try simulator.tpm2("pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
        await expectError({ if case .hardwareKeyRejected = $0 { true } else { false } }) {
            try await client.unlock(passcode: "2468")
        }
        await client.close()
    }

    @Test func requiredWithoutATPMRefusesInitialize() async throws {
        let daemon = try await daemon(
            nil, admin: #"{"schema": "cordon.policy.v1", "passcode": {"hardware": "required"}}"#)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        await expectError({ if case .hardwareRequired = $0 { true } else { false } }) {
            try await client.initialize(passcode: "2468")
        }
        #expect(try await client.status().state == .uninitialized)
        await client.close()
    }

    @Test func preferredWithoutATPMFallsBackToSoftwareWithAWarning() async throws {
        let daemon = try await daemon(nil)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        let protection = try #require(try await client.status().keyProtection)
        #expect(protection.kind == "software")
        #expect(protection.warning?.contains("no TPM protects the key") == true)
        try await client.unlock(passcode: "2468")
        await client.close()
        let status = try await runCommand(Binaries.cordon, ["status", "--socket", daemon.socketPath])
        #expect(status.stdout.contains("WARNING: no TPM protects the key"), "\(status.stdout)")
        let doctor = try await runCommand(Binaries.cordon, ["doctor", "--socket", daemon.socketPath])
        #expect(doctor.stdout.contains("warn  key protection: software only"), "\(doctor.stdout)")
    }

    @Test(arguments: [(["--tpm-tcti", "swtpm:host=127.0.0.1,port=2321"], [:]), ([], ["CORDON_TPM_TCTI": "mssim:"])])
    func aNonDefaultTCTIIsRefusedOutsideTestMode(arguments: [String], environment: [String: String]) async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let result = try await runCommand(
            Binaries.cordond,
            [
                "--runtime-dir", root.appending("run"), "--data-dir", root.appending("data"), "--config-dir",
                root.appending("config"), "--log-target", "stderr",
            ] + arguments, environment: environment)
        #expect(result.status == 2, "\(result.stderr)")
        let name = arguments.first ?? "CORDON_TPM_TCTI"
        #expect(result.stderr.contains("refusing to start: \(name) set what an administrator decides"))
    }
}
