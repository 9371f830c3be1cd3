import CordonLifecycle
import CordonProtocol
import Testing

@Suite("LifecycleMachine: start and initialize")
struct LifecycleMachineInitializeTests {
    @Test func freshMachineIsUninitializedWithNothingPending() {
        let machine = LifecycleMachine(configuration: .testing())
        #expect(machine.state == .uninitialized)
        #expect(machine.seq == 0)
        #expect(machine.failedAttempts == 0)
        #expect(machine.lastFailureAt == nil)
        #expect(machine.pending == nil)
        #expect(machine.lockedAt == nil)
        #expect(machine.retryAt == nil)
        #expect(machine.nextDeadline == nil)
    }

    @Test func startWithoutKeystoreIsUninitialized() {
        var h = LifecycleHarness()
        #expect(h.start(initialized: false) == [])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.seq == 0)
    }

    @Test func startWithKeystoreIsLockedWithoutKey() {
        var h = LifecycleHarness()
        #expect(h.start(initialized: true) == [])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.lastActivityAt == h.now)
        #expect(h.machine.nextDeadline == nil, "no idle deadline while locked")
    }

    @Test func startRestoresThePersistedAttemptCounter() {
        var h = LifecycleHarness()
        h.start(initialized: true, failedAttempts: 2, lastFailureAt: 990)
        #expect(h.machine.failedAttempts == 2)
        #expect(h.machine.lastFailureAt == 990)
    }

    @Test(arguments: 0...3)
    func initializeRejectsTooShortPasscodes(length: Int) {
        var h = LifecycleHarness()
        h.start(initialized: false)
        let actions = h.handle(.initializeRequested(passcodeLength: length, now: h.now))
        #expect(actions == [.fail(.invalidPasscode(reason: "the passcode must have at least 4 characters"))])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.pending == nil)
    }

    @Test func initializeHonoursTheConfiguredMinimumLength() {
        var h = LifecycleHarness(configuration: LifecycleConfiguration.testing(minPasscodeLength: 8))
        h.start(initialized: false)
        #expect(
            h.handle(.initializeRequested(passcodeLength: 7, now: h.now))
                == [.fail(.invalidPasscode(reason: "the passcode must have at least 8 characters"))])
        #expect(h.handle(.initializeRequested(passcodeLength: 8, now: h.now)) == [.createMasterKey])
    }

    @Test func initializeCreatesTheKeyThenLocksWithoutKey() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.createMasterKey])
        #expect(h.machine.pending == .initialize)
        #expect(h.machine.state == .uninitialized, "nothing changes until the key is stored")

        #expect(h.handle(.initializeFinished(success: true, now: h.now)) == [.succeed])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.pending == nil)
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.emitted.isEmpty, "initializing emits no event")
        #expect(h.machine.seq == 0)
    }

    @Test func initializeClearsALeftoverAttemptCounter() {
        var h = LifecycleHarness()
        h.start(initialized: false, failedAttempts: 4, lastFailureAt: 900)
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        h.handle(.initializeFinished(success: true, now: h.now))
        #expect(h.machine.failedAttempts == 0)
        #expect(h.machine.lastFailureAt == nil)
        #expect(h.machine.retryAfter(now: h.now) == 0)
    }

    @Test func failedKeystoreWriteReportsAnInternalErrorAndCanBeRetried() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        #expect(
            h.handle(.initializeFinished(success: false, now: h.now))
                == [.fail(.internalError(reason: "the keystore could not be written"))])
        #expect(h.machine.state == .uninitialized)
        #expect(h.machine.pending == nil)
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.createMasterKey])
    }

    @Test func initializeTwiceIsAlreadyInitialized() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.fail(.alreadyInitialized)])
        // AlreadyInitialized wins over a passcode that is too short.
        #expect(h.handle(.initializeRequested(passcodeLength: 1, now: h.now)) == [.fail(.alreadyInitialized)])
        #expect(h.machine.state == .lockedNoKey)
    }

    @Test func initializeAfterSuccessfulInitializeIsAlreadyInitialized() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        h.handle(.initializeFinished(success: true, now: h.now))
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.fail(.alreadyInitialized)])
    }

    @Test func secondInitializeWhileTheFirstIsPendingIsBusy() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        #expect(h.handle(.initializeRequested(passcodeLength: 6, now: h.now)) == [.fail(.busy)])
        #expect(h.machine.pending == .initialize)
    }

    @Test func strayCompletionsAreIgnored() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        #expect(h.handle(.initializeFinished(success: true, now: h.now)) == [])
        #expect(h.machine.state == .uninitialized)
        #expect(h.checked(true) == [])

        // A passcode result does not complete an initialize.
        h.handle(.initializeRequested(passcodeLength: 6, now: h.now))
        #expect(h.checked(true) == [])
        #expect(h.machine.pending == .initialize)
    }

    @Test func everythingButInitializeNeedsAPasscodeFirst() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        #expect(h.unlock() == [.fail(.notInitialized)])
        #expect(h.unlock(passcode: false) == [.fail(.notInitialized)])
        #expect(h.lock() == [.fail(.notInitialized)])
        #expect(h.revoke(.logout) == [.fail(.notInitialized)])
        #expect(h.revoke(.policy) == [.fail(.notInitialized)])
        #expect(h.handle(.wipeRequested(hasPasscode: true, now: h.now)) == [.fail(.notInitialized)])
        #expect(h.handle(.changePasscodeRequested(newPasscodeLength: 8, now: h.now)) == [.fail(.notInitialized)])
        #expect(h.machine.failedAttempts == 0, "refused requests never count as attempts")
        #expect(h.emitted.isEmpty)
    }

    @Test func shutdownRevocationSucceedsEvenUninitialized() {
        var h = LifecycleHarness()
        h.start(initialized: false)
        #expect(h.revoke(.shutdown) == [.succeed])
        #expect(h.machine.state == .uninitialized)
    }

    @Test func tickAndActivityDoNothingWhileLocked() {
        var h = LifecycleHarness()
        h.start(initialized: true)
        h.advance(10_000)
        #expect(h.activity() == [])
        #expect(h.tick() == [])
        #expect(h.machine.state == .lockedNoKey)
        #expect(h.machine.lastActivityAt == h.now)
    }
}
