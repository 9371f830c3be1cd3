import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: policy changes, lockout and forced wipes")
struct LifecycleMachinePolicyTests {
    /// A harness brought into `state` (no passcode check pending); the key-held state is
    /// reached by a lock without grace, so unlocking from it needs a passcode check.
    func harness(in state: LifecycleState, configuration: LifecycleConfiguration? = nil) -> LifecycleHarness {
        var h = LifecycleHarness(configuration: configuration ?? LifecycleConfiguration.testing(reauthGraceSeconds: 0))
        switch state {
        case .uninitialized: h.start(initialized: false)
        case .lockedNoKey: h.start(initialized: true)
        case .unlocked: h.startUnlocked()
        case .lockedKeyHeld:
            h.startUnlocked()
            h.lock()
        }
        return h
    }

    // MARK: - PolicyDidChange

    @Test(arguments: LifecycleState.allCases)
    func policyChangeEmitsOneEventInAnyState(state: LifecycleState) throws {
        var h = harness(in: state)
        try #require(h.machine.state == state)
        h.advance(5)
        let seq = h.machine.seq
        let failed = h.machine.failedAttempts
        let actions = h.handle(.policyChanged(version: "sha256:0123abcd", now: h.now))
        #expect(
            actions == [
                .emit(
                    CordonEvent(
                        seq: seq + 1, payload: .policyDidChange(policyVersion: "sha256:0123abcd"), reason: .policy,
                        time: h.now, state: state))
            ])
        #expect(h.machine.seq == seq + 1)
        #expect(h.machine.state == state, "a policy change alone changes no state")
        #expect(h.machine.failedAttempts == failed)
        #expect(h.machine.pending == nil)

        let next = h.handle(.policyChanged(version: "v2", now: h.now))
        #expect(next.events.map(\.seq) == [seq + 2])
        #expect(next.events.map(\.payload) == [.policyDidChange(policyVersion: "v2")])
    }

    @Test func policyChangeDuringAPendingCheckLeavesTheCheckAlone() {
        var h = harness(in: .lockedNoKey)
        h.unlock()
        let actions = h.handle(.policyChanged(version: "v7", now: h.now))
        #expect(actions.count == 1)
        #expect(actions.eventKinds == [.policyDidChange])
        #expect(actions.events.first?.seq == 1)
        #expect(h.machine.pending == .unlock)
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
        #expect(h.emitted.map(\.seq) == [1, 2, 3], "the policy event takes its place in the one sequence")
    }

    // MARK: - Lockout at max attempts

    let lockout = LifecycleConfiguration.testing(
        reauthGraceSeconds: 0, maxAttempts: 3, ackDeadlineMs: 1500,
        backoff: Backoff(freeAttempts: 10, baseSeconds: 1, maxSeconds: 120), onMaxAttempts: .lockout)

    @Test func lockoutFromUnlockedRevokesWithoutWiping() {
        // Wrong current passcodes while changing it, from the unlocked state.
        var h = harness(in: .unlocked, configuration: lockout)
        for left in [2, 1] {
            #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now)).last == .rewrapMasterKey)
            #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: left, retryAfterSeconds: 0))])
        }
        #expect(h.machine.state == .unlocked)
        h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now))
        let actions = h.checked(false)
        #expect(
            actions == [
                .maxAttemptsReached,
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .maxAttempts, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 1.5), reason: .maxAttempts,
                        time: h.now, state: .lockedNoKey)),
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 120, maxAttemptsAction: "lockout")),
            ])
        #expect(!actions.contains(.eraseKeystore))
        #expect(!actions.eventKinds.contains(.wiped))
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.failedAttempts == 3, "the counter stays at the maximum")
        #expect(h.machine.pending == nil)
        #expect(h.machine.retryAt == h.now + 120)
    }

    @Test func lockoutFromLockedKeyHeldDiscardsTheKey() {
        var h = harness(in: .lockedKeyHeld, configuration: lockout)
        #expect(h.machine.seq == 3)
        h.failAttempt()
        h.failAttempt()
        h.unlock()
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 1.5), reason: .maxAttempts,
                        time: h.now, state: .lockedNoKey)),
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 120, maxAttemptsAction: "lockout")),
            ])
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func lockoutWithoutAKeyOnlyAnswers() {
        var h = harness(in: .lockedNoKey, configuration: lockout)
        h.failAttempt()
        h.failAttempt()
        h.unlock()
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 120, maxAttemptsAction: "lockout")),
            ])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.state != .uninitialized)
        #expect(h.emitted.isEmpty)
    }

    @Test func lockedOutAttemptsWaitTheLongestBackOff() {
        var h = harness(in: .lockedNoKey, configuration: lockout)
        for _ in 1...3 { h.failAttempt() }
        let lockedOutAt = h.now

        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 120))])
        h.advance(119)
        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 1))])
        #expect(h.unlock(passcode: false) == [.fail(.retryLater(retryAfterSeconds: 1))])
        #expect(h.machine.failedAttempts == 3, "refused attempts are not counted")
        #expect(h.machine.lastFailureAt == lockedOutAt)

        // One attempt per maximum delay: a wrong one locks out again, still without a wipe.
        h.advance(1)
        #expect(h.unlock() == [.persistFailedAttempts(count: 4, lastFailureAt: h.now), .checkPasscode])
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 120, maxAttemptsAction: "lockout")),
            ])
        #expect(h.machine.state == .lockedNoKey)
        h.advance(60)
        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 60))])

        // The right passcode after the wait unlocks and clears the counter.
        h.advance(60)
        h.unlock()
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.retryAt == nil)
    }

    @Test func lockoutSurvivesARestart() {
        var h = LifecycleHarness(configuration: lockout)
        h.start(initialized: true, failedAttempts: 3, lastFailureAt: h.now - 20)
        #expect(h.machine.retryAt == h.now + 100)
        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 100))])
    }

    @Test func wipeIsStillTheDefaultAtMaxAttempts() {
        var configuration = lockout
        configuration.onMaxAttempts = .wipe
        var h = harness(in: .lockedNoKey, configuration: configuration)
        h.failAttempt()
        h.failAttempt()
        h.unlock()
        let actions = h.checked(false)
        #expect(actions.contains(.eraseKeystore))
        #expect(actions.last == .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe")))
        #expect(h.machine.state == .uninitialized)
    }

    // MARK: - Forced wipe

    @Test func forceWipeFromUnlockedRevokesThenErases() {
        var h = harness(in: .unlocked)
        h.advance(3)
        #expect(
            h.handle(.forceWipe(reason: .policy, now: h.now)) == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .policy, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .policy,
                        time: h.now, state: .lockedNoKey)),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 5, payload: .wiped(), reason: .policy, time: h.now, state: .uninitialized)),
            ])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.lockedAt == nil)
        #expect(h.machine.pending == nil)
        #expect(h.unlock() == [.fail(.notInitialized)])
    }

    @Test func forceWipeFromLockedKeyHeldDiscardsTheKeyThenErases() {
        var h = harness(in: .lockedKeyHeld)
        #expect(
            h.handle(.forceWipe(reason: .policy, now: h.now)) == [
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .policy,
                        time: h.now, state: .lockedNoKey)),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 5, payload: .wiped(), reason: .policy, time: h.now, state: .uninitialized)),
            ])
        #expect(h.machine.state == .uninitialized)
    }

    @Test func forceWipeFromLockedNoKeyErasesAndResetsTheCounter() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 5, lastFailureAt: h.now - 1)
        #expect(
            h.handle(.forceWipe(reason: .policy, now: h.now)) == [
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 1, payload: .wiped(), reason: .policy, time: h.now, state: .uninitialized)),
            ])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.machine.retryAt == nil)
        // A fresh start is possible.
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.createMasterKey])
    }

    @Test func forceWipeOfAnUninitializedContainerDoesNothing() {
        var h = harness(in: .uninitialized)
        #expect(h.handle(.forceWipe(reason: .policy, now: h.now)) == [])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.seq == 0)
        #expect(h.emitted.isEmpty)
        // Twice in a row: the second finds nothing to wipe.
        var wiped = harness(in: .lockedNoKey)
        #expect(wiped.handle(.forceWipe(reason: .policy, now: wiped.now)).eventKinds == [.wiped])
        #expect(wiped.handle(.forceWipe(reason: .policy, now: wiped.now)) == [])
        #expect(wiped.machine.seq == 1)
    }

    @Test func forceWipeAnswersAPendingUnlockFirstAndIgnoresItsLateResult() {
        var h = harness(in: .lockedNoKey)
        #expect(h.unlock() == [.persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode])
        #expect(h.machine.pending == .unlock)
        h.advance(0.5)
        #expect(
            h.handle(.forceWipe(reason: .policy, now: h.now)) == [
                .fail(.revoked(reason: "policy")),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 1, payload: .wiped(), reason: .policy, time: h.now, state: .uninitialized)),
            ])
        #expect(h.machine.pending == nil)
        #expect(h.machine.revokedDuringCheck == nil)
        h.advance(0.5)
        #expect(h.checked(true) == [], "the check's late result is ignored")
        #expect(h.checked(false) == [])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.emitted.map(\.kind) == [.wiped])
    }

    @Test func forceWipeDuringAnUnlockCheckWithAHeldKeyDiscardsItToo() {
        var h = harness(in: .lockedKeyHeld)
        h.unlock()
        #expect(h.machine.pending == .unlock)
        let actions = h.handle(.forceWipe(reason: .policy, now: h.now))
        #expect(actions.first == .fail(.revoked(reason: "policy")))
        #expect(
            Array(actions.dropFirst()) == [
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .policy,
                        time: h.now, state: .lockedNoKey)),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 5, payload: .wiped(), reason: .policy, time: h.now, state: .uninitialized)),
            ])
        #expect(h.checked(true) == [])
        #expect(h.machine.state == .uninitialized)
    }

    @Test func forceWipeAfterARevocationDuringTheCheckStillAnswersOnce() {
        var h = harness(in: .lockedNoKey)
        h.unlock()
        h.revoke(.logout)
        #expect(h.machine.revokedDuringCheck == .logout)
        let actions = h.handle(.forceWipe(reason: .policy, now: h.now))
        #expect(actions.filter { if case .fail = $0 { true } else { false } } == [.fail(.revoked(reason: "policy"))])
        #expect(h.machine.revokedDuringCheck == nil)
        #expect(h.checked(true) == [])
    }

    @Test func forceWipeAnswersAPendingPasscodeChange() {
        var h = harness(in: .unlocked)
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now)).last == .rewrapMasterKey)
        let actions = h.handle(.forceWipe(reason: .policy, now: h.now))
        #expect(actions.first == .fail(.revoked(reason: "policy")))
        #expect(actions.eventKinds == [.didLock, .encryptionKeyUnavailable, .wiped])
        #expect(actions.contains(.eraseKeystore))
        #expect(h.checked(true) == [])
        #expect(h.machine.state == .uninitialized)
    }

    @Test(arguments: LifecycleState.allCases)
    func anEnforcementIsOneEventNamingTheAppInAnyState(state: LifecycleState) throws {
        var h = harness(in: state)
        let seq = h.machine.seq
        let actions = h.handle(.appEnforced(appId: "com.example.deaf", pid: 42, action: .freeze, now: h.now))
        #expect(
            actions == [
                .emit(
                    CordonEvent(
                        seq: seq + 1, payload: .appEnforced(appId: "com.example.deaf", pid: 42, enforcement: .freeze),
                        reason: .policy, time: h.now, state: state))
            ])
        #expect(h.machine.state == state)
    }
}
