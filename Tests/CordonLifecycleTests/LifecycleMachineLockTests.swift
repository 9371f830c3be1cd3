import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: lock, idle timeout and revocation")
struct LifecycleMachineLockTests {
    @Test func lockKeepsTheKey() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.advance(5)
        let actions = h.lock()
        #expect(
            actions == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .userRequest, time: h.now, state: .lockedKeyHeld)),
                .succeed,
            ])
        #expect(h.machine.state == .lockedKeyHeld)
        #expect(h.machine.lockedAt == h.now)
        #expect(!actions.contains(.discardKey))
        #expect(h.machine.nextDeadline == nil)
    }

    @Test(arguments: [EventReason.userRequest, .screenLock, .suspend, .idleTimeout, .policy])
    func didLockCarriesTheTriggerReason(reason: EventReason) {
        var h = LifecycleHarness()
        h.startUnlocked()
        let events = h.lock(reason).events
        #expect(events.map(\.kind) == [.didLock])
        #expect(events.map(\.reason) == [reason])
    }

    @Test func lockingWhenAlreadyLockedOnlySucceeds() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.lock() == [.succeed], "locked without key")
        h.unlock()
        h.checked(true)
        h.lock()
        let seq = h.machine.seq
        #expect(h.lock() == [.succeed], "locked with key")
        #expect(h.machine.seq == seq)
        #expect(h.machine.state == .lockedKeyHeld)
    }

    @Test func lockWithDiscardKeyOnLockRevokes() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(discardKeyOnLock: true, ackDeadlineMs: 1500))
        h.startUnlocked()
        h.advance(7)
        let actions = h.lock(.screenLock)
        #expect(
            actions == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .screenLock, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 1.5), reason: .screenLock,
                        time: h.now, state: .lockedNoKey)),
                .succeed,
            ])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.lockedAt == h.now)
    }

    @Test func ackDeadlineUsesTheConfiguredMilliseconds() throws {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(ackDeadlineMs: 250))
        h.startUnlocked()
        let event = try #require(h.revoke(.logout).events.last)
        #expect(event.kind == .encryptionKeyUnavailable)
        #expect(event.ackDeadline == h.now + 0.25)
    }

    @Test func idleTimeoutLocksThroughTick() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 300))
        h.startUnlocked()
        let unlockedAt = h.now
        #expect(h.machine.nextDeadline == unlockedAt + 300)

        h.advance(299.5)
        #expect(h.tick() == [], "a tick before the deadline does nothing")
        #expect(h.machine.state == .unlocked)

        h.advance(0.5)
        #expect(
            h.tick() == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .idleTimeout, time: h.now, state: .lockedKeyHeld))
            ], "a timer lock answers no request, so there is no succeed")
        #expect(h.machine.state == .lockedKeyHeld)
        #expect(h.machine.nextDeadline == nil)
        h.advance(1_000)
        #expect(h.tick() == [])
    }

    @Test func activityPushesTheIdleDeadlineBack() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 60))
        h.startUnlocked()
        let start = h.now
        h.advance(50)
        #expect(h.activity() == [])
        #expect(h.machine.nextDeadline == start + 110)
        h.advance(10)
        #expect(h.tick() == [], "the original deadline has been pushed back")
        h.advance(49)
        #expect(h.tick() == [])
        h.advance(1)
        #expect(h.tick().eventKinds == [.didLock])
    }

    @Test func lateActivityReportsNeverMoveTheDeadlineEarlier() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 60))
        h.startUnlocked()
        let deadline = h.machine.nextDeadline
        h.handle(.activity(now: h.now - 30))
        #expect(h.machine.nextDeadline == deadline)
    }

    @Test func unlockWhileUnlockedCountsAsActivity() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 60))
        h.startUnlocked()
        h.advance(40)
        #expect(h.unlock(passcode: false) == [.succeed])
        #expect(h.machine.nextDeadline == h.now + 60)
        #expect(h.machine.failedAttempts == 0)
    }

    @Test func zeroIdleTimeoutDisablesTheIdleLock() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 0))
        h.startUnlocked()
        #expect(h.machine.nextDeadline == nil)
        h.advance(1_000_000)
        #expect(h.tick() == [])
        #expect(h.machine.state == .unlocked)
    }

    @Test func idleTimeoutWithDiscardKeyOnLockRevokes() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(idleTimeoutSeconds: 10, discardKeyOnLock: true))
        h.startUnlocked()
        h.advance(10)
        let actions = h.tick()
        #expect(
            actions == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .idleTimeout, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .idleTimeout,
                        time: h.now, state: .lockedNoKey)),
            ])
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func logoutFromUnlockedLocksThenDiscardsThenTells() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.advance(3)
        #expect(
            h.revoke(.logout) == [
                .emit(CordonEvent(seq: 3, payload: .didLock, reason: .logout, time: h.now, state: .lockedKeyHeld)),
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .logout,
                        time: h.now, state: .lockedNoKey)),
                .succeed,
            ])
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func revokeFromLockedWithKeySkipsDidLock() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.lock()
        h.advance(1)
        #expect(
            h.revoke(.policy) == [
                .discardKey,
                .emit(
                    CordonEvent(
                        seq: 4, payload: .encryptionKeyUnavailable(ackDeadline: h.now + 2), reason: .policy,
                        time: h.now, state: .lockedNoKey)),
                .succeed,
            ])
    }

    @Test func revokeWithoutKeyOnlySucceeds() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.revoke(.logout) == [.succeed])
        #expect(h.revoke(.shutdown) == [.succeed])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.emitted.isEmpty)
    }

    @Test func afterRevocationUnlockNeedsThePasscodeAndReinstallsTheKey() {
        var h = LifecycleHarness()
        h.startUnlocked()
        h.revoke(.logout)
        h.advance(1)
        #expect(h.unlock(passcode: false) == [.fail(.passcodeRequired)], "no grace after a revocation")
        #expect(h.unlock() == [.persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode])
        let actions = h.checked(true)
        #expect(actions.contains(.installKey))
        #expect(actions.eventKinds == [.encryptionKeyAvailable, .didUnlock])
    }
}
