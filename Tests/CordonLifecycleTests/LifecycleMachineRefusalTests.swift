import CordonLifecycle
import CordonProtocol
import Testing

/// A check the TPM refused before it evaluated the passcode (issue #27, case 6) gives back the
/// attempt counted before it; a wrong passcode, an abort and the max-attempts action do not.
@Suite("LifecycleMachine: refusals the TPM made, and the tighter of two limits")
struct LifecycleMachineRefusalTests {
    static let rejected = CordonError.hardwareKeyRejected(reason: "the PCRs changed")

    @Test func aRefusedCheckGivesTheAttemptBackAndStoresTheCount() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.unlock() == [.persistFailedAttempts(count: 1, lastFailureAt: h.now), .checkPasscode])
        #expect(
            h.handle(.checkRefused(Self.rejected, now: h.now)) == [
                .persistFailedAttempts(count: 0, lastFailureAt: nil), .fail(Self.rejected),
            ])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.machine.pending == nil)
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.emitted.isEmpty)
    }

    @Test func tenRefusalsAtTheLastAttemptWipeNothing() {
        // Nine wrong passcodes, then the PCRs change: the right passcode, retried, is never counted.
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(maxAttempts: 10, backoff: Backoff(freeAttempts: 20)))
        h.start(initialized: true)
        for _ in 1...9 { h.failAttempt() }
        let lastWrongAt = h.now
        for _ in 1...10 {
            h.advance(1)
            #expect(h.unlock() == [.persistFailedAttempts(count: 10, lastFailureAt: h.now), .checkPasscode])
            let actions = h.handle(.checkRefused(Self.rejected, now: h.now))
            #expect(actions == [.persistFailedAttempts(count: 9, lastFailureAt: lastWrongAt), .fail(Self.rejected)])
            #expect(!actions.contains(.eraseKeystore))
            #expect(!actions.contains(.maxAttemptsReached))
        }
        #expect(h.machine.failedAttempts == 9)
        #expect(h.machine.lastFailureAt == lastWrongAt, "the back-off runs from the last real guess")
        #expect(h.machine.state == .lockedNoKey)
        // Once the PCRs are back, the right passcode unlocks.
        h.unlock()
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
    }

    @Test func aRefusalIsNoFreeGuessAWrongPasscodeStillCounts() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(maxAttempts: 3, backoff: Backoff(freeAttempts: 10)))
        h.start(initialized: true)
        h.unlock()
        h.handle(.checkRefused(.hardwareLockedOut(retryAfterSeconds: 10), now: h.now))
        #expect(h.failAttempt() == [.fail(.wrongPasscode(attemptsLeft: 2, retryAfterSeconds: 0))])
        #expect(h.failAttempt() == [.fail(.wrongPasscode(attemptsLeft: 1, retryAfterSeconds: 0))])
        let last = h.failAttempt()
        #expect(last.first == .maxAttemptsReached)
        #expect(last.contains(.eraseKeystore))
    }

    @Test func anAbortedCheckKeepsTheAttemptCounted() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        #expect(
            h.handle(.checkAborted(now: h.now)) == [
                .fail(.internalError(reason: "the failed-attempt counter could not be stored"))
            ])
        #expect(h.machine.failedAttempts == 1)
    }

    @Test func aRefusalWithoutAPendingCheckIsIgnored() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 4, lastFailureAt: h.now - 100)
        #expect(h.handle(.checkRefused(Self.rejected, now: h.now)) == [])
        #expect(h.machine.failedAttempts == 4)
        // A check answered by a forced wipe meanwhile: its late refusal changes nothing.
        h.unlock()
        h.handle(.forceWipe(reason: .policy, now: h.now))
        #expect(h.handle(.checkRefused(Self.rejected, now: h.now)) == [])
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.state == .uninitialized)
    }

    @Test func aRefusedCheckDuringARevocationAnswersTheRefusal() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.unlock()
        h.revoke(.logout)
        #expect(h.handle(.checkRefused(Self.rejected, now: h.now)).last == .fail(Self.rejected))
        #expect(h.machine.revokedDuringCheck == nil)
        h.unlock()
        #expect(h.checked(true).eventKinds == [.encryptionKeyAvailable, .didUnlock])
    }

    // MARK: - The TPM's limit

    @Test func theTPMsTighterLimitIsTheAttemptsLeft() {
        var h = LifecycleHarness()  // maxAttempts 10
        h.start(initialized: true)
        h.unlock()
        #expect(
            h.handle(.passcodeChecked(correct: false, now: h.now, hardwareAttemptsLeft: 2)) == [
                .fail(
                    .wrongPasscode(
                        attemptsLeft: 2, retryAfterSeconds: 0, maxAttemptsLeft: 9, hardwareAttemptsLeft: 2))
            ])
        h.unlock()
        #expect(
            h.handle(.passcodeChecked(correct: false, now: h.now, hardwareAttemptsLeft: 0)) == [
                .fail(
                    .wrongPasscode(
                        attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsLeft: 8, hardwareAttemptsLeft: 0))
            ])
        #expect(h.machine.state == .lockedNoKey, "the TPM's lockout is not the max-attempts action")
    }

    @Test func cordondsLimitWhenItIsTheTighter() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(maxAttempts: 3))
        h.start(initialized: true)
        h.unlock()
        #expect(
            h.handle(.passcodeChecked(correct: false, now: h.now, hardwareAttemptsLeft: 31)) == [
                .fail(.wrongPasscode(attemptsLeft: 2, retryAfterSeconds: 0))
            ])
    }

    // MARK: - What the last attempt did

    @Test func theMaxAttemptsActionIsAnnouncedFirstAndNamedInTheAnswer() {
        var h = LifecycleHarness(
            configuration: LifecycleConfiguration.testing(
                maxAttempts: 1, backoff: Backoff(freeAttempts: 10, maxSeconds: 60), onMaxAttempts: .lockout))
        h.start(initialized: true)
        let actions = h.failAttempt()
        #expect(actions.first == .maxAttemptsReached, "fingerprint unlock is disarmed first")
        #expect(
            actions.last == .fail(.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 60, maxAttemptsAction: "lockout")))
    }
}
