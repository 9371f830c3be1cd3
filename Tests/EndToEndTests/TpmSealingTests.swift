import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Passcode and TPM": the master key's wrapping needs a secret a TPM 2.0
/// unseals only with the passcode, so the TPM's dictionary-attack lockout limits guesses and a copy
/// of the database is useless elsewhere. Against the real daemon and a TPM simulator (swtpm), with
/// `tpm2-tools` as the reference. cordond, the CLI and the callers run as an ordinary user
/// (``UserAgent``), in test mode: only test mode takes a simulator's TCTI (or, for "no TPM", one
/// where nothing listens, so that the machine's own TPM is never used), and the flags set here.
@Suite(.serialized) struct TpmSealingTests {
    static let noPolicy = #"{"schema": "cordon.policy.v1"}"#

    /// An agent whose key is sealed by `simulator` (none: no TPM at all), with `admin` as its admin
    /// policy, its home laid out by `prepareHome`.
    func agent(
        _ simulator: SoftwareTPM?, admin: String = noPolicy, arguments: [String] = [],
        prepareHome: (TemporaryDirectory) throws -> Void = { _ in }
    ) async throws -> UserAgent {
        // Nothing listens on port 1: no TPM at all.
        let tcti = simulator?.tcti ?? "swtpm:host=127.0.0.1,port=1"
        return try await UserAgent(
            policy: admin, initialize: false,
            arguments: ["--tpm-tcti", tcti, "--backoff-base-seconds", "0"] + arguments,
            testMode: true, prepareHome: prepareHome)
    }

    func initialize(_ agent: UserAgent, _ passcode: String) async throws {
        let initialized = try await agent.cli(["init", "--passcode-stdin"], input: passcode + "\n")
        #expect(initialized.status == 0, "\(initialized.stderr)")
    }

    func record(_ agent: UserAgent) throws -> WrappedKey? {
        try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true).loadWrappedKey()
    }

    @Test func initAndUnlockGoThroughTheTPMAndAWrongPasscodeCountsInIt() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator)
        defer { agent.cleanUp() }
        try await initialize(agent, "2468")
        // The stored record names its protection and holds the TPM object, not the secret.
        let record = try #require(try record(agent))
        #expect(record.protection == .tpm)
        #expect(record.hardware?.privateBlob.isEmpty == false)
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"]).error == nil)
        #expect(try await agent.agentStatus().state == .unlocked)
        #expect(try await agent.outcome("io.cordon.Agent.Lock", [:]).error == nil)
        let wrong = try await agent.outcome("io.cordon.Agent.ChangePasscode", ["old": "1357", "new": "9753"])
        #expect(wrong.error == "io.cordon.Agent.WrongPasscode")
        // The TPM counted the wrong passcode; the agent reports the TPM's own numbers.
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 1)
        let protection = try #require(try await agent.agentStatus().keyProtection)
        #expect(protection.kind == "tpm")
        #expect(protection.attemptsLeft == (protection.maxFailures ?? 0) - 1)
        // A passcode change re-seals: a new TPM object under the new passcode.
        #expect(try await agent.outcome("io.cordon.Agent.ChangePasscode", ["old": "2468", "new": "9753"]).error == nil)
        let resealed = try #require(try self.record(agent))
        #expect(resealed.hardware?.privateBlob != record.hardware?.privateBlob)
    }

    @Test func theDatabaseCopiedToAnotherTPMDoesNotUnlockWithTheRightPasscode() async throws {
        let first = try SoftwareTPM()
        defer { first.stop() }
        let second = try SoftwareTPM()
        defer { second.stop() }
        let original = try await agent(first)
        defer { original.cleanUp() }
        try await initialize(original, "2468")
        original.terminate()
        // The same database, another machine's TPM.
        let moved = try await agent(second) { home in
            for directory in ["data", "config"]
            where FileManager.default.fileExists(atPath: original.home.appending(directory)) {
                try FileManager.default.copyItem(
                    atPath: original.home.appending(directory), toPath: home.appending(directory))
            }
        }
        defer { moved.cleanUp() }
        let refused = try await moved.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"])
        #expect(refused.error == "io.cordon.Agent.HardwareKeyRejected")
        #expect(try await moved.agentStatus().state == .lockedNoKey)
    }

    @Test func repeatedWrongPasscodesTriggerTheTPMLockoutAndTheAgentReportsIt() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        try simulator.setLockout(maxTries: 3)
        let agent = try await agent(simulator, arguments: ["--max-attempts", "100"])
        defer { agent.cleanUp() }
        try await initialize(agent, "2468")
        for _ in 0..<3 {
            let wrong = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "0000"])
            #expect(wrong.error == "io.cordon.Agent.WrongPasscode")
        }
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 3)
        // Even the right passcode is refused now, with the TPM's retry time.
        let locked = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"])
        #expect(locked.error == "io.cordon.Agent.HardwareLockedOut")
        #expect(locked.parameters["retryAfterSeconds"] as? Double == 600, "\(locked.parameters)")
        let protection = try #require(try await agent.agentStatus().keyProtection)
        #expect(protection.inLockout == true)
        #expect(protection.attemptsLeft == 0)
        #expect(protection.retryAfterSeconds == 600)
        let status = try await agent.cli(["status"])
        #expect(status.stdout.contains("LOCKED OUT"), "\(status.stdout)")
    }

    @Test func aPCRBoundSealFailsAfterThePCRIsExtended() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(
            simulator, admin: #"{"schema": "cordon.policy.v1", "passcode": {"pcrs": [16]}}"#,
            arguments: ["--discard-key-on-lock", "--reauth-grace", "0"])
        defer { agent.cleanUp() }
        try await initialize(agent, "2468")
        #expect(try await agent.agentStatus().keyProtection?.kind == "tpm+pcrs")
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"]).error == nil)
        #expect(try await agent.outcome("io.cordon.Agent.Lock", [:]).error == nil)
        _ = try simulator.tpm2("pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
        let refused = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"])
        #expect(refused.error == "io.cordon.Agent.HardwareKeyRejected")
    }

    @Test func requiredWithoutATPMRefusesInitialize() async throws {
        // The short passcodes the TPM cases use, allowed here too: the refusal must be the TPM's.
        let agent = try await agent(
            nil,
            admin:
                #"{"schema": "cordon.policy.v1", "passcode": {"hardware": "required", "minLength": 4, "allowSimple": true}}"#
        )
        defer { agent.cleanUp() }
        let refused = try await agent.outcome("io.cordon.Agent.Initialize", ["passcode": "2468"])
        #expect(refused.error == "io.cordon.Agent.HardwareRequired")
        #expect(try await agent.agentStatus().state == .uninitialized)
    }

    @Test func preferredWithoutATPMFallsBackToSoftwareWithAWarning() async throws {
        let agent = try await agent(
            nil, admin: #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 4, "allowSimple": true}}"#)
        defer { agent.cleanUp() }
        try await initialize(agent, "2468")
        let protection = try #require(try await agent.agentStatus().keyProtection)
        #expect(protection.kind == "software")
        #expect(protection.warning?.contains("no TPM protects the key") == true)
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "2468"]).error == nil)
        let status = try await agent.cli(["status"])
        #expect(status.stdout.contains("WARNING: no TPM protects the key"), "\(status.stdout)")
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("warn  key protection: software only"), "\(doctor.stdout)")
    }

    @Test(arguments: [(["--tpm-tcti", "swtpm:host=127.0.0.1,port=2321"], [:]), ([], ["CORDON_TPM_TCTI": "mssim:"])])
    func aNonDefaultTCTIIsRefusedOutsideTestMode(arguments: [String], environment: [String: String]) async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try await NobodyAgent.run(["/bin/chown", "-R", "\(TestUser.uid):\(TestUser.gid)", home.path])
        let result = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [
                Binaries.cordond.path, "--runtime-dir", home.appending("run"), "--data-dir", home.appending("data"),
                "--config-dir", home.appending("config"), "--log-target", "stderr",
            ] + arguments, environment: UserAgent.environment(home: home.path).merging(environment) { $1 })
        #expect(result.status == 2, "\(result.stderr)")
        let name = arguments.first ?? "CORDON_TPM_TCTI"
        #expect(result.stderr.contains("refusing to start: \(name) set what an administrator decides"))
    }
}
