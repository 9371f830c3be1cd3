import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: unlock")
struct LifecycleMachineUnlockTests {
    @Test func unlockPersistsTheAttemptBeforeCheckingThePasscode() throws {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.advance(2)
        let actions = h.unlock()
        #expect(actions == [.persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode])
        let persist = try #require(actions.firstIndex(of: .persistFailedAttempts(count: 1, lastFailureAt: h.now)))
        let check = try #require(actions.firstIndex(of: .checkPasscode))
        #expect(persist < check)
        #expect(h.machine.pending == .unlock)
        #expect(h.machine.failedAttempts == 1)
        #expect(h.machine.lastFailureAt == h.now)
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func persistedCounterStartsFromTheRestoredValue() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 2, lastFailureAt: 10)
        #expect(h.unlock() == [.persistFailedAttempts(count: 3, lastFailureAt: h.now), .checkPasscode])
    }

    @Test func correctPasscodeInstallsTheKeyAndUnlocks() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        h.advance(0.3)
        let actions = h.checked(true)
        #expect(
            actions == [
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .installKey,
                .emit(
                    CordonEvent(
                        seq: 1, payload: .encryptionKeyAvailable(), reason: .userRequest, time: h.now,
                        state: .lockedKeyHeld)),
                .emit(CordonEvent(seq: 2, payload: .didUnlock, reason: .userRequest, time: h.now, state: .unlocked)),
                .succeed,
            ])
        #expect(h.machine.state == .unlocked)
        #expect(h.machine.pending == nil)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.machine.lockedAt == nil)
        #expect(h.machine.seq == 2)
        #expect(h.machine.nextDeadline == h.now + 300, "the idle timer starts at the unlock")
    }

    @Test func unlockWithoutPasscodeFromNoKeyIsPasscodeRequired() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)])
        #expect(h.machine.failedAttempts == 0, "a missing passcode is not an attempt")
        #expect(h.machine.pending == nil)
    }

    @Test func unlockWithinGraceNeedsNoPasscode() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(30)
        #expect(
            h.unlock(passcode: false) == [
                .emit(CordonEvent(seq: 4, payload: .didUnlock, reason: .userRequest, time: h.now, state: .unlocked)),
                .succeed,
            ])
        #expect(h.machine.state == .unlocked)
        #expect(h.machine.lockedAt == nil)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.nextDeadline == h.now + 300)
    }

    @Test func unlockWithinGraceIgnoresAGivenPasscode() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(1)
        let actions = h.unlock(passcode: true)
        #expect(!actions.contains(.checkPasscode))
        #expect(actions.eventKinds == [.didUnlock])
    }

    @Test func graceIncludesItsLastInstant() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(60)
        #expect(h.unlock(passcode: false).eventKinds == [.didUnlock])
    }

    @Test func afterGraceUnlockWithoutPasscodeIsPasscodeRequired() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(60.5)
        #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)])
        #expect(h.machine.state == .lockedKeyHeld)
    }

    @Test func afterGraceThePasscodeUnlocksWithoutReinstallingTheKey() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(120)
        #expect(h.unlock() == [.persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode])
        #expect(
            h.checked(true) == [
                .persistFailedAttempts(count: 0, lastFailureAt: nil),
                .emit(CordonEvent(seq: 4, payload: .didUnlock, reason: .userRequest, time: h.now, state: .unlocked)),
                .succeed,
            ], "the key is still held: no installKey, no EncryptionKeyAvailable")
        #expect(h.machine.state == .unlocked)
    }

    @Test func zeroGraceAlwaysNeedsThePasscode() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 0))
        h.startUnlocked()
        h.lock()
        #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)])
    }

    @Test func discardingLockLeavesNoGrace() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60, discardKeyOnLock: true))
        h.startUnlocked()
        h.lock()
        #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)])
    }

    @Test func graceIsMeasuredFromTheLastLock() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(50)
        h.unlock(passcode: false)
        h.advance(100)
        h.lock()
        h.advance(50)
        #expect(h.unlock(passcode: false).eventKinds == [.didUnlock])
    }

    @Test func idleLockAlsoOpensTheGrace() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 30, reauthGraceSeconds: 10))
        h.startUnlocked()
        h.advance(30)
        #expect(h.tick().eventKinds == [.didLock])
        h.advance(5)
        #expect(h.unlock(passcode: false).eventKinds == [.didUnlock])
    }

    @Test func secondUnlockWhileTheCheckRunsIsBusy() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        #expect(h.unlock() == [.fail(.busy)])
        #expect(h.unlock(passcode: false) == [.fail(.busy)])
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now)) == [.fail(.busy)])
        #expect(h.machine.failedAttempts == 1, "a refused request does not count")
        #expect(h.machine.pending == .unlock)
        #expect(h.checked(true).last == .succeed)
        #expect(h.machine.pending == nil)
    }

    @Test func withinGraceAPendingCheckStillMeansBusy() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(1)
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now)).last == .rewrapMasterKey)
        #expect(h.unlock(passcode: false) == [.fail(.busy)], "even a grace unlock waits for the running check")
        #expect(h.machine.state == .lockedKeyHeld)
    }

    @Test func outsideGraceAPendingCheckIsBusyRatherThanPasscodeRequired() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(reauthGraceSeconds: 60))
        h.startUnlocked()
        h.lock()
        h.advance(61)
        h.unlock()
        #expect(h.unlock(passcode: false) == [.fail(.busy)])
    }
}
