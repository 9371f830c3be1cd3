import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: wrong passcodes, back-off and max attempts")
struct LifecycleMachineAttemptsTests {
    @Test func wrongPasscodeReportsAttemptsLeftAndBackOff() {
        var h = LifecycleHarness()  // maxAttempts 10, 3 free attempts, then 1 s doubling
        h.start(initialized: true)
        for attempt in 1...3 {
            #expect(h.unlock() == [.persistFailedAttempts(count: attempt, lastFailureAt: h.now), .checkPasscode])
            #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 10 - attempt, retryAfterSeconds: 0))])
            #expect(h.machine.failedAttempts == attempt)
            #expect(h.machine.pending == nil)
            #expect(h.machine.state == .lockedNoKey)
        }
        h.unlock()
        #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 6, retryAfterSeconds: 1))])
        #expect(h.machine.retryAt == h.now + 1)
        #expect(h.emitted.isEmpty, "failed attempts are not events")
    }

    @Test func backOffRefusesAttemptsUntilItExpires() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        for _ in 1...4 { h.failAttempt() }
        let failedAt = h.now

        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 1))])
        #expect(h.unlock(passcode: false) == [.fail(.retryLater(retryAfterSeconds: 1))])
        #expect(
            h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now)) == [
                .fail(.retryLater(retryAfterSeconds: 1))
            ])
        h.advance(0.25)
        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 0.75))])
        #expect(h.machine.failedAttempts == 4, "refused attempts are not counted")
        #expect(h.machine.lastFailureAt == failedAt)

        h.advance(0.75)
        #expect(h.unlock() == [.persistFailedAttempts(count: 5, lastFailureAt: h.now), .checkPasscode])
        #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 5, retryAfterSeconds: 2))])
    }

    @Test func backOffCountsFromWhenTheAttemptBegan() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        for _ in 1...3 { h.failAttempt() }
        h.unlock()
        h.advance(0.25)  // the check took a quarter of a second
        #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 6, retryAfterSeconds: 0.75))])
    }

    @Test func backOffDoubles() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        var delays: [Double] = []
        for _ in 1...8 {
            h.advance(h.machine.retryAfter(now: h.now))
            h.unlock()
            if case .fail(.wrongPasscode(_, let delay, _, _, _)) = h.checked(false).last { delays.append(delay) }
        }
        #expect(delays == [0, 0, 0, 1, 2, 4, 8, 16])
    }

    @Test func backOffSurvivesARestart() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 5, lastFailureAt: h.now - 0.5)
        #expect(h.machine.retryAt == h.now + 1.5)
        #expect(h.unlock() == [.fail(.retryLater(retryAfterSeconds: 1.5))])
        h.advance(1.5)
        #expect(h.unlock() == [.persistFailedAttempts(count: 6, lastFailureAt: h.now), .checkPasscode])
        #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 4, retryAfterSeconds: 4))])
    }

    @Test func restoredCounterWithinFreeAttemptsAllowsAnAttemptAtOnce() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 3, lastFailureAt: h.now)
        #expect(h.machine.retryAt == nil)
        #expect(h.unlock() == [.persistFailedAttempts(count: 4, lastFailureAt: h.now), .checkPasscode])
    }

    @Test func correctPasscodeResetsCounterAndBackOff() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        for _ in 1...5 {
            h.advance(h.machine.retryAfter(now: h.now))
            h.failAttempt()
        }
        h.advance(h.machine.retryAfter(now: h.now))
        h.unlock()
        #expect(h.checked(true).first == .persistFailedAttempts(count: 0, lastFailureAt: nil))
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.retryAt == nil)
        #expect(h.machine.retryAfter(now: h.now) == 0)
    }

    @Test func maxAttemptsWipesAContainerWithoutKey() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(maxAttempts: 3, backoff: Backoff(freeAttempts: 10)))
        h.start(initialized: true)
        #expect(h.failAttempt() == [.fail(.wrongPasscode(attemptsLeft: 2, retryAfterSeconds: 0))])
        #expect(h.failAttempt() == [.fail(.wrongPasscode(attemptsLeft: 1, retryAfterSeconds: 0))])
        h.unlock()
        h.advance(0.2)
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 1, payload: .wiped(), reason: .maxAttempts, time: h.now, state: .uninitialized)),
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe")),
            ])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.machine.pending == nil)
        #expect(h.unlock() == [.fail(.notInitialized)])
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.createMasterKey])
    }

    @Test func maxAttemptsRevokesAHeldKeyBeforeWiping() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(
                reauthGraceSeconds: 0, maxAttempts: 2, backoff: Backoff(freeAttempts: 10)))
        h.startUnlocked()
        h.lock()
        #expect(h.machine.state == .lockedKeyHeld)
        #expect(h.failAttempt() == [.fail(.wrongPasscode(attemptsLeft: 1, retryAfterSeconds: 0))])
        h.unlock()
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .maxAttempts,
                        time: h.now, state: .lockedNoKey)),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 5, payload: .wiped(), reason: .maxAttempts, time: h.now, state: .uninitialized)),
                .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe")),
            ])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.lockedAt == nil)
    }

    @Test func maxAttemptsCountsTheRestoredCounter() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 9, lastFailureAt: h.now - 10_000)
        #expect(h.unlock() == [.persistFailedAttempts(count: 10, lastFailureAt: h.now), .checkPasscode])
        let actions = h.checked(false)
        #expect(actions.contains(.eraseKeystore))
        #expect(actions.eventKinds == [.wiped])
        #expect(h.machine.state == .uninitialized)
    }

    @Test func counterAlreadyAtMaxAfterACrashWipesOnTheNextWrongPasscode() {
        // The agent was killed during the last allowed check: the counter was persisted first.
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(maxAttempts: 5))
        h.start(initialized: true, failedAttempts: 5, lastFailureAt: h.now - 10_000)
        h.unlock()
        #expect(
            h.checked(false).last
                == .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe")))
        #expect(h.machine.state == .uninitialized)
    }

    @Test func aCheckResultWithoutPendingRequestIsIgnored() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.checked(false) == [])
        #expect(h.checked(true) == [])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func lockDuringACheckDoesNotDisturbIt() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        #expect(h.lock() == [.succeed])
        #expect(h.machine.pending == .unlock)
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
    }

    @Test func revocationDuringAnUnlockCheckWins() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        #expect(h.revoke(.logout) == [.succeed])
        #expect(h.machine.pending == .unlock)
        let actions = h.handle(.passcodeChecked(correct: true, now: h.now))
        #expect(
            actions == [.persistFailedAttempts(count: 0, lastFailureAt: nil), .fail(.revoked(reason: "logout"))])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.failedAttempts == 0)
        // The next unlock works normally.
        h.unlock()
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
    }
}
