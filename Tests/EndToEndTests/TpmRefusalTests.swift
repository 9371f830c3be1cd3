import CordonProtocol
import CordonSecrets
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Refusals the TPM makes" (issue #27, case 6): a refusal the TPM makes
/// before it evaluates the passcode (the bound PCRs changed, lockout) is no guess and never counts
/// toward `passcode.maxAttempts` or its wipe; `status` and `doctor` see a PCR change before any
/// unlock; "attempts left" is the TPM's own figure when it limits more. Against the real daemon and
/// a TPM simulator (swtpm), `tpm2-tools` changing the PCRs and reading the TPM's counter; cordond,
/// the CLI and the callers run as an ordinary user (``UserAgent``), in test mode.
@Suite(.serialized) struct TpmRefusalTests {
    static let passcode = "2468"
    /// The TPM required, the key bound to PCR 16 (resettable), three attempts before a wipe.
    static let boundToPCR16 = #"""
        {"schema": "cordon.policy.v1", "passcode": {"hardware": "required", "pcrs": [16], "maxAttempts": 3,
         "onMaxAttempts": "wipe", "minLength": 4, "allowSimple": true}}
        """#

    func agent(_ simulator: SoftwareTPM, policy: String, arguments: [String] = []) async throws -> UserAgent {
        try await UserAgent(
            policy: policy, initialize: false,
            arguments: ["--tpm-tcti", simulator.tcti, "--backoff-base-seconds", "0"] + arguments, testMode: true)
    }

    func initialize(_ agent: UserAgent) async throws {
        let initialized = try await agent.cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
        try #require(initialized.status == 0, "\(initialized.stderr)")
    }

    @Test func theRightPasscodeRefusedAfterAPCRChangeNeverCountsOrWipes() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator, policy: Self.boundToPCR16)
        defer { agent.cleanUp() }
        try await initialize(agent)
        #expect(try await agent.agentStatus().keyProtection?.problem == nil)
        try simulator.tpm2("pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])

        // Before any unlock: status and doctor say the PCRs changed, and name the recovery path.
        let protection = try #require(try await agent.agentStatus().keyProtection)
        let problem = try #require(protection.problem, "\(protection)")
        #expect(problem.contains("the PCRs the key is bound to (16) have changed since it was sealed"))
        #expect(problem.contains("cordon init --recovery"))
        let shown = try await agent.cli(["status"])
        #expect(shown.stdout.contains("TPM problem:"), "\(shown.stdout)")
        #expect(shown.stdout.contains("(16) have changed"), "\(shown.stdout)")
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.status != 0, "\(doctor.stdout)")
        #expect(doctor.stdout.contains("FAIL  key protection: TPM with PCRs 16; the PCRs"), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("ok    key protection"), "\(doctor.stdout)")

        // Ten unlocks with the right passcode: the TPM evaluates none, cordond counts none.
        for _ in 1...10 {
            let refused = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode])
            #expect(refused.error == "io.cordon.Agent.HardwareKeyRejected", "\(refused)")
            #expect((refused.parameters["reason"] as? String)?.contains("(16) have changed") == true)
        }
        var now = try await agent.agentStatus()
        #expect(now.failedAttempts == 0)
        #expect(now.state == .lockedNoKey)
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 0)
        // A wrong passcode is refused the same way: no answer tells a right passcode from a wrong one.
        let wrong = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "1357"])
        #expect(wrong.error == "io.cordon.Agent.HardwareKeyRejected")
        #expect(try await agent.agentStatus().failedAttempts == 0)

        // A recovery key of another container is counted, and says what the last attempt would do.
        let foreign = RecoveryKey.generate()
        defer { foreign.secret.zero() }
        let recover = try await agent.outcome(
            "io.cordon.Agent.Recover", ["recoveryKey": foreign.formatted, "passcode": "9753"])
        #expect(recover.error == "io.cordon.Agent.InvalidRecoveryKey")
        let reason = recover.parameters["reason"] as? String ?? ""
        #expect(reason.contains("2 attempts left before the max-attempts action"), "\(reason)")
        #expect(reason.contains("the container will be erased"), "\(reason)")
        now = try await agent.agentStatus()
        #expect(now.failedAttempts == 1)
        #expect(now.state == .lockedNoKey, "nothing was wiped")

        // The PCR back as it was sealed: the problem goes, and the right passcode unlocks.
        try simulator.tpm2("pcrreset", ["16"])
        #expect(try await agent.agentStatus().keyProtection?.problem == nil)
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode]).error == nil)
        now = try await agent.agentStatus()
        #expect(now.state == .unlocked)
        #expect(now.failedAttempts == 0)
        agent.terminate()
    }

    @Test func attemptsLeftIsTheTPMsWhenItLimitsMoreAndItsLockoutDoesNotCount() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        try simulator.setLockout(maxTries: 3)
        let agent = try await agent(
            simulator, policy: #"{"schema": "cordon.policy.v1"}"#, arguments: ["--max-attempts", "10"])
        defer { agent.cleanUp() }
        try await initialize(agent)
        // The CLI says which limit applies.
        let first = try await agent.cli(["unlock", "--passcode-stdin"], input: "0000\n")
        #expect(first.status != 0)
        #expect(
            first.stderr.contains("2 attempts left before the TPM locks out (9 before the max-attempts action)"),
            "\(first.stderr)")
        for (tpmLeft, cordondLeft) in [(1, 8), (0, 7)] {
            let wrong = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "0000"])
            #expect(wrong.error == "io.cordon.Agent.WrongPasscode")
            #expect(wrong.parameters["attemptsLeft"] as? Int == tpmLeft, "\(wrong.parameters)")
            #expect(wrong.parameters["hardwareAttemptsLeft"] as? Int == tpmLeft, "\(wrong.parameters)")
            #expect(wrong.parameters["maxAttemptsLeft"] as? Int == cordondLeft, "\(wrong.parameters)")
        }
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 3)
        #expect(try await agent.agentStatus().failedAttempts == 3)
        // In lockout, even the right passcode is refused unevaluated: not counted toward the wipe.
        for _ in 1...3 {
            let locked = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode])
            #expect(locked.error == "io.cordon.Agent.HardwareLockedOut", "\(locked)")
        }
        #expect(try await agent.agentStatus().failedAttempts == 3)
        #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == 3)
        agent.terminate()
    }

    @Test func nothingIsErasedWithoutSayingSoFirstAndAfterwards() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(
            simulator, policy: #"{"schema": "cordon.policy.v1"}"#,
            arguments: ["--max-attempts", "2", "--on-max-attempts", "wipe"])
        defer { agent.cleanUp() }
        try await initialize(agent)
        let shown = try await agent.cli(["status"]).stdout
        #expect(shown.contains("0 of 2 (then the container is erased)"), "\(shown)")
        let foreign = RecoveryKey.generate()
        defer { foreign.secret.zero() }
        let warned = try await agent.outcome(
            "io.cordon.Agent.Recover", ["recoveryKey": foreign.formatted, "passcode": "9753"])
        #expect(
            (warned.parameters["reason"] as? String)?.contains(
                "1 attempt left before the max-attempts action: then the container will be erased") == true,
            "\(warned.parameters)")
        // The last attempt: the CLI says so before it asks, and says afterwards that the data is gone.
        let last = try await agent.cli(
            ["init", "--recovery", "--recovery-stdin", "--passcode-stdin"], input: foreign.formatted + "\n8642\n")
        #expect(last.status != 0)
        #expect(last.stderr.contains("this is the last attempt (passcode.maxAttempts)"), "\(last.stderr)")
        #expect(last.stderr.contains("the container was erased"), "\(last.stderr)")
        #expect(last.stderr.contains("its data is gone"), "\(last.stderr)")
        #expect(try await agent.agentStatus().state == .uninitialized)

        // A wrong passcode that applies the wipe says so too.
        try await initialize(agent)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: "0000\n").status != 0)
        let erased = try await agent.cli(["unlock", "--passcode-stdin"], input: "0000\n")
        #expect(erased.stderr.contains("the container was erased"), "\(erased.stderr)")
        #expect(erased.stderr.contains("its data is gone"), "\(erased.stderr)")
        #expect(try await agent.agentStatus().state == .uninitialized)
        agent.terminate()
    }
}
