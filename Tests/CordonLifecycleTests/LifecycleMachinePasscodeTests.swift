import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: change passcode and wipe")
struct LifecycleMachinePasscodeTests {
    @Test func changePasscodeCountsTheAttemptThenRewraps() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.advance(1)
        #expect(
            h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now)) == [
                .persistFailedAttempts(count: 1, lastFailureAt: h.now), .rewrapMasterKey,
            ])
        #expect(h.machine.pending == .changePasscode)
        #expect(h.checked(true) == [.persistFailedAttempts(count: 0, lastFailureAt: nil), .succeed])
        #expect(h.machine.state == .unlocked)
        #expect(h.machine.pending == nil)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.seq == 2, "changing the passcode emits no event")
    }

    @Test func changePasscodeWhileLockedKeepsTheStateAndInstallsNothing() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now)).last == .rewrapMasterKey)
        #expect(h.checked(true) == [.persistFailedAttempts(count: 0, lastFailureAt: nil), .succeed])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.emitted.isEmpty)
    }

    @Test func changePasscodeRejectsAShortNewPasscodeWithoutCounting() {
        var h = LifecycleHarness()
        h.startUnlocked()
        #expect(
            h.handle(.changePasscodeRequested(newPasscodeLength: 2, now: h.now))
                == [.fail(.invalidPasscode(reason: "the passcode must have at least 4 characters"))])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.pending == nil)
    }

    @Test func changePasscodeWithTheWrongOldPasscodeCounts() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now))
        #expect(h.checked(false) == [.fail(.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0))])
        #expect(h.machine.state == .unlocked, "a wrong old passcode does not lock")
        #expect(h.machine.failedAttempts == 1)
        #expect(h.machine.pending == nil)
    }

    @Test func changePasscodeWhileBusyIsBusy() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now))
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now)) == [.fail(.busy)])
        #expect(h.machine.failedAttempts == 1)
    }

    @Test func changePasscodeWrongTooOftenWipesAnUnlockedContainer() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(maxAttempts: 2, backoff: Backoff(freeAttempts: 10)))
        h.startUnlocked()
        h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now))
        h.checked(false)
        h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now))
        #expect(
            h.checked(false) == [
                .maxAttemptsReached,
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .maxAttempts, time: h.now, state: .lockedKeyHeld)),
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
    }

    @Test func wipeFromUnlockedRevokesThenErases() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(ackDeadlineMs: 3000))
        h.startUnlocked()
        h.advance(9)
        #expect(
            h.handle(.wipeRequested(hasPasscode: true, now: h.now)) == [
                .persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode,
            ])
        #expect(
            h.checked(true) == [
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .wipe, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 3), reason: .wipe, time: h.now,
                        state: .lockedNoKey)),
                .eraseKeystore,
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 5, payload: .wiped(), reason: .wipe, time: h.now, state: .uninitialized)),
                .succeed,
            ])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.lockedAt == nil)
        #expect(h.machine.nextDeadline == nil)
    }

    @Test func wipeNeedsThePasscodeAndAWrongOneCounts() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.handle(.wipeRequested(hasPasscode: false, now: h.now)) == [.fail(.passcodeRequired)])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.wipe(correct: false) == [.fail(.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0))])
        #expect(h.machine.state == .lockedNoKey)
        // Locked, with the right passcode, the wipe goes ahead and installs no key.
        let actions = h.wipe()
        #expect(!actions.contains(.installKey))
        #expect(actions.contains(.eraseKeystore))
        #expect(h.machine.state == .uninitialized)
    }

    @Test func aScreenLockOrSuspendEndsTheGrace() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        for reason in [EventReason.screenLock, .suspend] {
            h.startUnlocked()
            h.lock(reason)
            #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)], "\(reason)")
        }
        h.startUnlocked()
        h.lock(.userRequest)
        #expect(h.unlock(passcode: false).last == .succeed, "an explicit lock keeps the grace")
    }

    @Test func afterAWipeTheContainerCanBeInitializedAgainAndSeqContinues() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.wipe()
        let seq = h.machine.seq
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.createMasterKey])
        #expect(h.handle(.initializeFinished(success: true, now: h.now)) == [.succeed])
        h.unlock()
        let events = h.checked(true).events
        #expect(events.map(\.seq) == [seq + 1, seq + 2])
    }

    @Test func wipeWhileAPasscodeChangeIsRunningIsRefusedAsBusy() {
        var h = LifecycleHarness()
        h.startUnlocked()
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now)).last == .rewrapMasterKey)
        #expect(h.handle(.wipeRequested(hasPasscode: true, now: h.now)) == [.fail(.busy)])
        #expect(h.machine.state == .unlocked)
        #expect(h.machine.pending == .changePasscode)
    }
}
