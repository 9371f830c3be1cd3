import CordonProtocol
import Foundation
import Testing

/// Fingerprint unlock against the real fprintd on libfprint's virtual device, on a private
/// system bus (docs/THREAT-MODEL.md, "Fingerprint unlock"). cordond, the CLI and the apps run as
/// an ordinary user (``UserAgent``, the finger enrolled for that user), in test mode: only test
/// mode takes a private system bus. The bus, fprintd and its helper (which enrolls and scans) are
/// root's, as the system's are; the forger is the user's.
@Suite(.serialized) struct FingerprintUnlockTests {
    static let passcode = "2468"

    /// cordond with `passcode.biometrics` as given, on the fake system bus (short passcodes allowed,
    /// as everywhere here; unbound apps trusted). A lock discards the key (`lock.discardKeyOnLock`),
    /// so `cordon lock` leaves the container as a logout would, but with the sealed copy kept for
    /// fingerprint unlock: a logout zeroes that copy too.
    func agent(
        _ bus: FakeFingerprintBus, biometrics: String = "allowed", passcode extra: String = "", arguments: [String] = []
    ) async throws -> UserAgent {
        try await UserAgent(
            policy: #"""
                {"schema": "cordon.policy.v1", "passcode": {"biometrics": "\#(biometrics)", "minLength": 4,
                 "allowSimple": true\#(extra)}, "apps": {"unknown": "trusted"}, "lock": {"discardKeyOnLock": true}}
                """#, initialize: false, arguments: arguments, testMode: true,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "CORDON_SYSTEM_BUS_ADDRESS": bus.address])
    }

    /// Initializes, unlocks with the passcode and opts in, through the CLI.
    func optedIn(_ agent: UserAgent) async throws {
        let input = Self.passcode + "\n"
        try #require(try await agent.cli(["init", "--passcode-stdin"], input: input).status == 0)
        try #require(try await agent.cli(["unlock", "--passcode-stdin"], input: input).status == 0)
        let on = try await agent.cli(["biometrics", "on", "--passcode-stdin"], input: input)
        try #require(on.status == 0, "\(on.stderr)")
    }

    /// Runs `UnlockWithFingerprint` while `finger` is scanned; returns its error, if any, and the
    /// error's parameters.
    func fingerprintUnlock(_ agent: UserAgent, _ bus: FakeFingerprintBus, finger: String, forgeFirst: Bool = false)
        async throws -> (error: String?, parameters: [String: Any])
    {
        let started = bus.verificationsStarted
        // The reply crosses from the task as JSON (a dictionary of `Any` is not Sendable).
        let call = Task {
            try JSONSerialization.data(withJSONObject: try await agent.varlink("io.cordon.Agent.UnlockWithFingerprint"))
        }
        try await eventually("fprintd starts verification") { bus.verificationsStarted > started }
        if forgeFirst {
            try bus.send("forge")
            try await bus.waitFor("forged")
        }
        try await bus.scan(finger, atVerification: started + 1)
        let reply = try JSONSerialization.jsonObject(with: try await call.value) as? [String: Any] ?? [:]
        return (reply["error"] as? String, reply["parameters"] as? [String: Any] ?? [:])
    }

    @Test func aMatchingFingerUnlocksAndAppsGetTheirKeysAgain() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        try await optedIn(agent)
        let app = try await agent.startApp("com.example.notes")
        defer { app.cleanUp() }
        let key = try #require((try await app.call("io.cordon.App.GetKey")["parameters"] as? [String: Any])?["key"])
        // A lock discards the key (the policy says so) and apps are told; the app gets no key while locked.
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await agent.agentStatus().state == .lockedNoKey)
        let withheld = try await app.call("io.cordon.App.GetKey")
        #expect((withheld["error"] as? String)?.hasPrefix("io.cordon.") == true, "\(withheld)")
        #expect(try await fingerprintUnlock(agent, bus, finger: "finger-a").error == nil)
        #expect(try await agent.agentStatus().state == .unlocked)
        let again = try await app.call("io.cordon.App.GetKey")
        #expect((again["parameters"] as? [String: Any])?["key"] as? String == key as? String, "\(again)")
        #expect(agent.log.contains("unlocked with a fingerprint"))
        agent.terminate()
    }

    @Test func aNonMatchingFingerDoesNotUnlockAndCountsAsAFailedAttempt() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        try await optedIn(agent)
        #expect(try await agent.cli(["lock"]).status == 0)
        let before = try await agent.agentStatus().failedAttempts
        let (error, parameters) = try await fingerprintUnlock(agent, bus, finger: "finger-b")
        guard error == "io.cordon.Agent.WrongPasscode", let left = parameters["attemptsLeft"] as? Int else {
            Issue.record("expected WrongPasscode, got \(String(describing: error)) \(parameters)")
            return
        }
        let status = try await agent.agentStatus()
        #expect(status.state == .lockedNoKey)
        #expect(status.failedAttempts == before + 1)
        #expect(left == status.maxAttempts - status.failedAttempts)
        // The passcode still unlocks.
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode]).error == nil)
        #expect(try await agent.agentStatus().state == .unlocked)
        agent.terminate()
    }

    @Test func aForgedVerifyStatusFromAnotherSenderIsIgnored() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        try await optedIn(agent)
        #expect(try await agent.cli(["lock"]).status == 0)
        // A same-user process on the bus says "verify-match, done" on fprintd's device path first;
        // then the real reader scans a finger that does not match.
        let (error, _) = try await fingerprintUnlock(agent, bus, finger: "finger-b", forgeFirst: true)
        #expect(error == "io.cordon.Agent.WrongPasscode", "expected WrongPasscode, got \(String(describing: error))")
        #expect(try await agent.agentStatus().state == .lockedNoKey)
        #expect(agent.log.contains("ignored VerifyStatus signals from a sender that does not own"))
        agent.terminate()
    }

    @Test func theFirstUnlockAfterStartNeedsThePasscode() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        try await optedIn(agent)
        agent.terminate()
        try await agent.restart()
        let refused = try await agent.outcome("io.cordon.Agent.UnlockWithFingerprint")
        #expect(refused.error == "io.cordon.Agent.BiometricsPasscodeNeeded")
        #expect(
            refused.parameters["reason"] as? String
                == "no passcode unlock since the agent started, since fingerprint unlock was turned on, "
                + "or since passcode.maxAttempts was reached",
            "\(refused.parameters)")
        // The opt-in survived the restart: after a passcode unlock, a finger unlocks again.
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode]).error == nil)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await fingerprintUnlock(agent, bus, finger: "finger-a").error == nil)
        agent.terminate()
    }

    @Test func disabledPolicyAndOptedOutRefuseWithTypedErrors() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let disabled = try await agent(bus, biometrics: "disabled")
        defer { disabled.cleanUp() }
        let input = Self.passcode + "\n"
        #expect(try await disabled.cli(["init", "--passcode-stdin"], input: input).status == 0)
        #expect(try await disabled.cli(["unlock", "--passcode-stdin"], input: input).status == 0)
        let optIn = try await disabled.outcome(
            "io.cordon.Agent.SetBiometrics", ["enabled": true, "passcode": Self.passcode])
        #expect(optIn.error == "io.cordon.Agent.BiometricsDisabled")
        #expect(try await disabled.cli(["logout"]).status == 0)
        let unlock = try await disabled.outcome("io.cordon.Agent.UnlockWithFingerprint")
        #expect(unlock.error == "io.cordon.Agent.BiometricsDisabled")
        disabled.terminate()

        let allowed = try await agent(bus)
        defer { allowed.cleanUp() }
        try await optedIn(allowed)
        #expect(try await allowed.outcome("io.cordon.Agent.SetBiometrics", ["enabled": false]).error == nil)
        #expect(try await allowed.cli(["logout"]).status == 0)
        let optedOut = try await allowed.outcome("io.cordon.Agent.UnlockWithFingerprint")
        #expect(optedOut.error == "io.cordon.Agent.BiometricsNotEnabled")
        // Opting out zeroed the kept key: opting in again needs a passcode unlock first.
        #expect(allowed.log.contains("the user opted out"))
        #expect(bus.verificationsStarted == 0)
        allowed.terminate()
    }

    /// `cordon biometrics on|off` and `cordon unlock --fingerprint`, falling back to the passcode.
    @Test func theCommandLineOptsInAndFallsBackToThePasscode() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: "2468\n").status == 0)
        // Not turned on: the finger is not asked for; the passcode from stdin unlocks.
        let first = try await agent.cli(["unlock", "--fingerprint", "--passcode-stdin"], input: "2468\n")
        #expect(first.status == 0)
        #expect(first.stderr.contains("fingerprint unlock is not turned on"))
        #expect(first.stdout.contains("unlocked"))
        let on = try await agent.cli(["biometrics", "on", "--passcode-stdin"], input: "2468\n")
        #expect(on.status == 0, "\(on.stderr)")
        #expect(try await agent.cli(["lock"]).status == 0)
        let started = bus.verificationsStarted
        let unlocking = Task { try await agent.cli(["unlock", "--fingerprint", "--passcode-stdin"], input: "") }
        try await bus.scan("finger-a", atVerification: started + 1)
        let unlocked = try await unlocking.value
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try await agent.agentStatus().state == .unlocked)
        let off = try await agent.cli(["biometrics", "off"])
        #expect(off.status == 0)
        #expect(off.stdout.contains("fingerprint unlock off"))
        agent.terminate()
    }

    /// Issue #27, case 7: wrong fingers and passcodes reach `passcode.maxAttempts` with
    /// `onMaxAttempts: lockout`; once the lockout is over, a matching finger alone is refused (the
    /// key kept for it was zeroed at the lockout) and only the passcode brings it back.
    @Test func aLockoutZeroesTheKeyKeptForFingerprints() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(
            bus, passcode: #", "maxAttempts": 3, "onMaxAttempts": "lockout""#,
            arguments: ["--backoff-base-seconds", "0", "--backoff-max-seconds", "2"])
        defer { agent.cleanUp() }
        try await optedIn(agent)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await fingerprintUnlock(agent, bus, finger: "finger-b").error == "io.cordon.Agent.WrongPasscode")
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "1357"]).error != nil)
        let last = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "1357"])
        #expect(last.error == "io.cordon.Agent.WrongPasscode")
        #expect(last.parameters["maxAttemptsAction"] as? String == "lockout", "\(last.parameters)")
        #expect(agent.log.contains("passcode.maxAttempts was reached"))
        // The lockout is over (two seconds here), and a matching finger is still refused, unscanned.
        try await eventually("the lockout is over") { try await agent.agentStatus().retryAfterSeconds == 0 }
        let scans = bus.verificationsStarted
        let refused = try await agent.outcome("io.cordon.Agent.UnlockWithFingerprint")
        #expect(refused.error == "io.cordon.Agent.BiometricsPasscodeNeeded", "\(refused)")
        #expect(bus.verificationsStarted == scans)
        #expect(try await agent.agentStatus().state == .lockedNoKey)
        // The passcode unlocks, and re-arms fingerprint unlock.
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode]).error == nil)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await fingerprintUnlock(agent, bus, finger: "finger-a").error == nil)
        agent.terminate()
    }

    /// Issue #32, item 10: a logout zeroes the key kept for fingerprint unlock (a lock keeps it),
    /// whether the container was unlocked or already locked without its key: a matching finger is
    /// then refused, unscanned, with the true reason, and only the passcode unlocks.
    @Test func aLogoutZeroesTheKeyKeptForFingerprints() async throws {
        let bus = try await FakeFingerprintBus(user: TestUser.name)
        defer { bus.cleanUp() }
        let agent = try await agent(bus)
        defer { agent.cleanUp() }
        try await optedIn(agent)
        let scans = bus.verificationsStarted
        #expect(try await agent.cli(["logout"]).status == 0)
        let refused = try await agent.outcome("io.cordon.Agent.UnlockWithFingerprint")
        #expect(refused.error == "io.cordon.Agent.BiometricsPasscodeNeeded", "\(refused)")
        #expect(
            refused.parameters["reason"] as? String == "logged out since the last passcode unlock", "\(refused)")
        #expect(agent.log.contains("fingerprint unlock disarmed: the kept key is zeroed (the user logged out)"))
        #expect(agent.log.contains("key discarded: every key copy in the agent is zeroed"))
        // Locked without the key, the sealed copy stays (the log says so); a logout then zeroes it.
        #expect(try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": Self.passcode]).error == nil)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(agent.log.contains("a sealed copy stays for fingerprint unlock"))
        #expect(try await agent.cli(["logout"]).status == 0)
        let cli = try await agent.cli(["unlock", "--fingerprint", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(
            cli.stderr.contains(
                "fingerprint: the passcode is needed: logged out since the last passcode unlock; unlock with the passcode"
            ),
            "\(cli.stderr)")
        #expect(bus.verificationsStarted == scans, "no finger was scanned")
        agent.terminate()
    }
}
