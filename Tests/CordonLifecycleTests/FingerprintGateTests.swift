import CordonLifecycle
import Testing

/// When a fingerprint may unlock, with the time injected (docs/THREAT-MODEL.md, "Fingerprint unlock").
@Suite struct FingerprintGateTests {
    let start = 1_700_000_000.0

    @Test func refusesInOrderPolicyOptInThenPasscodeFirst() {
        let gate = FingerprintGate()
        #expect(gate.refusal(policyAllows: false, optedIn: true, now: start) == .disabledByPolicy)
        #expect(gate.refusal(policyAllows: true, optedIn: false, now: start) == .notOptedIn)
        // Nothing since the agent started: the first unlock needs the passcode.
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start) == .passcodeFirst)
    }

    @Test func aPasscodeUnlockAllowsFingerprintsUntilTheReauthLimit() {
        var gate = FingerprintGate()
        gate.passcodeUnlocked(now: start)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start + 60) == nil)
        gate.fingerprintUnlocked()
        gate.fingerprintUnlocked()
        #expect(gate.fingerprintUnlocks == 2)
        let limit = start + FingerprintGate.defaultReauthSeconds
        #expect(gate.deadline == limit)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: limit) == nil)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: limit + 1) == .reauthLimit)
        #expect(gate.expired(now: limit + 1))
        // Fingerprint unlocks do not extend it; a passcode unlock does.
        gate.passcodeUnlocked(now: limit + 2)
        #expect(gate.fingerprintUnlocks == 0)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: limit + 3) == nil)
    }

    @Test func disarmingNeedsThePasscodeAgain() {
        var gate = FingerprintGate(reauthSeconds: 10)
        gate.passcodeUnlocked(now: start)
        gate.disarm()
        #expect(gate.deadline == nil)
        #expect(!gate.expired(now: start + 100))
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start + 1) == .passcodeFirst)
    }

    /// Issue #32, item 10: the gate remembers why it was disarmed, so the refusal after the kept
    /// key is zeroed is the true one (the limit, a logout), until the next passcode unlock.
    @Test func disarmedForTheLimitOrALogoutTheRefusalSaysWhy() {
        var gate = FingerprintGate(reauthSeconds: 10)
        gate.passcodeUnlocked(now: start)
        gate.disarm(reason: .reauthLimit)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start + 11) == .reauthLimit)
        gate.passcodeUnlocked(now: start + 20)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start + 21) == nil)
        gate.disarm(reason: .loggedOut)
        #expect(gate.refusal(policyAllows: true, optedIn: true, now: start + 22) == .loggedOut)
        // The policy and the opt-in still come first.
        #expect(gate.refusal(policyAllows: false, optedIn: true, now: start + 22) == .disabledByPolicy)
        gate.passcodeUnlocked(now: start + 30)
        #expect(gate.disarmedFor == nil)
    }
}
