import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: event order and snapshots")
struct LifecycleMachineSequenceTests {
    /// Drives a long, varied session and returns every event emitted.
    private func longSession(discardKeyOnLock: Bool) -> LifecycleHarness {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(
                idleTimeoutSeconds: 30, reauthGraceSeconds: 20, discardKeyOnLock: discardKeyOnLock, maxAttempts: 6,
                backoff: Backoff(freeAttempts: 2, baseSeconds: 1, maxSeconds: 8)))
        h.start(initialized: false)
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        h.handle(.initializeFinished(success: true, now: h.now))
        h.unlock(); h.checked(true)
        h.advance(10); h.activity()
        h.advance(35); h.tick()  // idle lock
        h.advance(5); h.unlock(passcode: false)  // within grace (unless the key was discarded)
        h.unlock(); h.checked(true)
        h.lock(.screenLock)
        h.advance(100)
        for _ in 1...3 {
            h.advance(h.machine.retryAfter(now: h.now))
            h.failAttempt()
        }
        h.advance(h.machine.retryAfter(now: h.now))
        h.unlock(); h.checked(true)
        h.revoke(.logout)
        h.unlock(); h.checked(true)
        h.lock(.suspend)
        h.revoke(.policy)
        h.unlock(); h.checked(true)
        h.wipe()
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        h.handle(.initializeFinished(success: true, now: h.now))
        h.unlock(); h.checked(true)
        for _ in 1...6 {
            h.advance(h.machine.retryAfter(now: h.now))
            h.handle(.changePasscodeRequested(newPasscodeLength: 6, now: h.now))
            h.checked(false)
        }
        h.revoke(.shutdown)
        return h
    }

    @Test(arguments: [false, true])
    func everyEventHasTheNextSequenceNumber(discardKeyOnLock: Bool) {
        let h = longSession(discardKeyOnLock: discardKeyOnLock)
        let seqs = h.emitted.map(\.seq)
        #expect(seqs.count > 15)
        #expect(seqs == Array(1...seqs.count), "strictly increasing, no gaps")
        #expect(h.machine.seq == seqs.count)
        #expect(h.machine.state == .uninitialized, "the session ends wiped by max attempts")
        #expect(h.emitted.last?.kind == .wiped)
        #expect(h.emitted.last?.reason == .maxAttempts)
    }

    @Test(arguments: [false, true])
    func eventTimesNeverGoBackwards(discardKeyOnLock: Bool) {
        let times = longSession(discardKeyOnLock: discardKeyOnLock).emitted.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test(arguments: [false, true])
    func onlyKeyUnavailableEventsCarryADeadline(discardKeyOnLock: Bool) {
        for event in longSession(discardKeyOnLock: discardKeyOnLock).emitted {
            #expect((event.ackDeadline != nil) == (event.kind == .encryptionKeyUnavailable))
            if let deadline = event.ackDeadline { #expect(deadline == event.time + 2) }
        }
    }

    @Test(arguments: [false, true])
    func eventStatesDescribeTheStateAfterTheEvent(discardKeyOnLock: Bool) {
        for event in longSession(discardKeyOnLock: discardKeyOnLock).emitted {
            switch event.kind {
            case .encryptionKeyAvailable: #expect(event.state == .lockedKeyHeld)
            case .didUnlock: #expect(event.state == .unlocked)
            case .didLock: #expect(event.state == .lockedKeyHeld)
            case .encryptionKeyUnavailable: #expect(event.state == .lockedNoKey)
            case .wiped: #expect(event.state == .uninitialized)
            case .state, .policyDidChange, .appEnforced, .openDocument, .postureWarning, .didSignOut:
                Issue.record("a lifecycle session never emits \(event.kind)")
            }
        }
    }

    @Test(arguments: [false, true])
    func keyAvailabilityAlternates(discardKeyOnLock: Bool) {
        // Apps see EncryptionKeyAvailable and EncryptionKeyUnavailable strictly alternate.
        let kinds = longSession(discardKeyOnLock: discardKeyOnLock).emitted.map(\.kind)
            .filter { $0 == .encryptionKeyAvailable || $0 == .encryptionKeyUnavailable }
        #expect(kinds.first == .encryptionKeyAvailable)
        #expect(zip(kinds, kinds.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test func snapshotReportsTheCurrentStateAndSeq() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(
            h.machine.snapshot(now: 5)
                == CordonEvent(seq: 0, payload: .state, reason: .startup, time: 5, state: .lockedNoKey))
        h.startUnlocked()
        let snapshot = h.machine.snapshot(now: h.now)
        #expect(snapshot.seq == h.machine.seq)
        #expect(snapshot.kind == .state)
        #expect(snapshot.state == .unlocked)
        #expect(snapshot.ackDeadline == nil)
        #expect(h.machine.seq == h.machine.snapshot(now: h.now).seq, "a snapshot does not consume a seq")
    }
}
