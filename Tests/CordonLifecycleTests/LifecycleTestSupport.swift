import CordonLifecycle
import CordonProtocol

/// Shorthands for building expected action lists and driving the machine with a manual clock.
extension LifecycleAction {
    /// The emitted event, when the action is `.emit`.
    var event: CordonEvent? {
        if case .emit(let event) = self { return event }
        return nil
    }
}

extension Array where Element == LifecycleAction {
    /// The events among the actions, in order.
    var events: [CordonEvent] { compactMap(\.event) }
    /// The kinds of the emitted events, in order.
    var eventKinds: [EventKind] { events.map(\.kind) }
}

/// A lifecycle machine plus a manual clock and a log of every event it ever emitted.
struct LifecycleHarness {
    var machine: LifecycleMachine
    var now: Double
    private(set) var emitted: [CordonEvent] = []

    init(configuration: LifecycleConfiguration = LifecycleConfiguration.testing(), now: Double = 1_000) {
        machine = LifecycleMachine(configuration: configuration)
        self.now = now
    }

    /// Advances the manual clock.
    mutating func advance(_ seconds: Double) { now += seconds }

    /// Feeds one input and records its events.
    @discardableResult
    mutating func handle(_ input: LifecycleInput) -> [LifecycleAction] {
        let actions = machine.handle(input)
        emitted += actions.events
        return actions
    }

    // Inputs at the current clock time.

    @discardableResult
    mutating func start(initialized: Bool, failedAttempts: Int = 0, lastFailureAt: Double? = nil) -> [LifecycleAction] {
        handle(.start(initialized: initialized, failedAttempts: failedAttempts, lastFailureAt: lastFailureAt, now: now))
    }

    @discardableResult
    mutating func unlock(passcode: Bool = true) -> [LifecycleAction] {
        handle(.unlockRequested(hasPasscode: passcode, now: now))
    }

    /// A wipe with the passcode, checked as `correct`: the actions of the check's result.
    @discardableResult
    mutating func wipe(correct: Bool = true) -> [LifecycleAction] {
        let started = handle(.wipeRequested(hasPasscode: true, now: now))
        guard started.last == .checkPasscode else { return started }
        return checked(correct)
    }

    @discardableResult
    mutating func checked(_ correct: Bool) -> [LifecycleAction] {
        handle(.passcodeChecked(correct: correct, now: now))
    }

    @discardableResult
    mutating func lock(_ reason: EventReason = .userRequest) -> [LifecycleAction] {
        handle(.lock(reason: reason, now: now))
    }

    @discardableResult
    mutating func revoke(_ reason: EventReason) -> [LifecycleAction] {
        handle(.revoke(reason: reason, now: now))
    }

    @discardableResult
    mutating func tick() -> [LifecycleAction] { handle(.tick(now: now)) }

    @discardableResult
    mutating func activity() -> [LifecycleAction] { handle(.activity(now: now)) }

    /// Starts initialized and unlocks with the (correct) passcode.
    mutating func startUnlocked() {
        start(initialized: true)
        unlock()
        checked(true)
    }

    /// One failed passcode attempt (request, then a wrong check); returns the check's actions.
    @discardableResult
    mutating func failAttempt() -> [LifecycleAction] {
        unlock()
        return checked(false)
    }
}

extension LifecycleConfiguration {
    /// Settings for the machine's unit tests: the values the agent's built-in policy has, unless a
    /// test says otherwise (the machine itself has no defaults for them).
    static func testing(
        idleTimeoutSeconds: Int = 300, reauthGraceSeconds: Int = 60, discardKeyOnLock: Bool = false,
        maxAttempts: Int = 10, ackDeadlineMs: Int = 2000, minPasscodeLength: Int = 4, backoff: Backoff = Backoff(),
        onMaxAttempts: MaxAttemptsAction = .wipe
    ) -> LifecycleConfiguration {
        LifecycleConfiguration(
            idleTimeoutSeconds: idleTimeoutSeconds, reauthGraceSeconds: reauthGraceSeconds,
            discardKeyOnLock: discardKeyOnLock, maxAttempts: maxAttempts, ackDeadlineMs: ackDeadlineMs,
            minPasscodeLength: minPasscodeLength, backoff: backoff, onMaxAttempts: onMaxAttempts)
    }
}
