import CordonProtocol

/// The container's lock and key lifecycle as a pure state machine.
///
/// It holds no key and does no I/O: it decides, and returns the actions the server performs
/// in order (persist the counter, check a passcode, emit events, zero keys).
public struct LifecycleMachine: Sendable {
    /// What a pending passcode check is for.
    public enum PendingCheck: Sendable, Equatable {
        case initialize
        case unlock
        case changePasscode
        /// A wipe the user asked for: it needs the passcode.
        case wipe
        /// An administrator's call that needs the passcode and nothing else (a selective wipe,
        /// reading an app's storage): answered `succeed` when it is right.
        case authorize
    }

    public private(set) var state: LifecycleState = .uninitialized
    /// The sequence number of the last event emitted.
    public private(set) var seq = 0
    public private(set) var failedAttempts = 0
    public private(set) var lastFailureAt: Double?
    /// `lastFailureAt` before the pending check counted its attempt: restored if the TPM refuses it.
    private var lastFailureBeforeCheck: Double?
    /// The request being worked on asynchronously, if any.
    public private(set) var pending: PendingCheck?
    public private(set) var lastActivityAt: Double = 0
    public private(set) var lockedAt: Double?
    /// Whether the last lock allows an unlock without the passcode within the grace: not after a
    /// screen lock or a suspend (the user walked away; docs/THREAT-MODEL.md).
    public private(set) var graceAllowed = true
    /// Set when a revocation arrives while an unlock check runs: the revocation wins.
    public private(set) var revokedDuringCheck: EventReason?
    public var configuration: LifecycleConfiguration

    public init(configuration: LifecycleConfiguration) {
        self.configuration = configuration
    }

    /// When the next passcode attempt is allowed (nil: now).
    public var retryAt: Double? {
        guard let lastFailureAt else { return nil }
        let lockedOut = configuration.onMaxAttempts == .lockout && failedAttempts >= configuration.maxAttempts
        let delay =
            lockedOut ? configuration.backoff.maxSeconds : configuration.backoff.delay(afterFailures: failedAttempts)
        return delay > 0 ? lastFailureAt + delay : nil
    }

    /// Seconds until the next attempt is allowed.
    public func retryAfter(now: Double) -> Double {
        guard let retryAt else { return 0 }
        return max(0, retryAt - now)
    }

    /// The next time a `tick` can change anything (the idle lock), if any.
    public var nextDeadline: Double? {
        guard state == .unlocked, configuration.idleTimeoutSeconds > 0 else { return nil }
        return lastActivityAt + Double(configuration.idleTimeoutSeconds)
    }

    /// Feeds one input and returns the actions to perform, in order.
    public mutating func handle(_ input: LifecycleInput) -> [LifecycleAction] {
        switch input {
        case .start(let initialized, let failed, let lastFailure, let now):
            state = initialized ? .lockedNoKey : .uninitialized
            failedAttempts = failed
            lastFailureAt = lastFailure
            lastActivityAt = now
            return []
        case .initializeRequested(let length, _):
            guard state == .uninitialized else { return [.fail(.alreadyInitialized)] }
            guard pending == nil else { return [.fail(.busy)] }
            if let problem = passcodeProblem(length: length) { return [.fail(problem)] }
            pending = .initialize
            return [.createMasterKey]
        case .initializeFinished(let success, _):
            guard pending == .initialize else { return [] }
            pending = nil
            guard success else { return [.fail(.internalError(reason: "the keystore could not be written"))] }
            state = .lockedNoKey
            failedAttempts = 0
            lastFailureAt = nil
            return [.succeed]
        case .unlockRequested(let hasPasscode, let now):
            return unlock(hasPasscode: hasPasscode, now: now)
        case .changePasscodeRequested(let length, let now):
            if let refusal = refuseCheck(now: now) { return [refusal] }
            if let problem = passcodeProblem(length: length) { return [.fail(problem)] }
            return beginCheck(.changePasscode, now: now)
        case .passcodeChecked(let correct, let now, let hardwareAttemptsLeft):
            return finishCheck(correct: correct, hardwareAttemptsLeft: hardwareAttemptsLeft, now: now)
        case .checkAborted:
            guard pending != nil, pending != .initialize else { return [] }
            // The counter stays as counted: an aborted check never gives an attempt back.
            pending = nil
            return [.fail(.internalError(reason: "the failed-attempt counter could not be stored"))]
        case .checkRefused(let error, _):
            guard pending != nil, pending != .initialize else { return [] }
            // The TPM refused before it evaluated the passcode: no guess was made, so the attempt
            // counted before the check is given back (docs/THREAT-MODEL.md, "Refusals the TPM makes").
            pending = nil
            revokedDuringCheck = nil
            failedAttempts = max(0, failedAttempts - 1)
            lastFailureAt = failedAttempts == 0 ? nil : lastFailureBeforeCheck
            return [.persistFailedAttempts(count: failedAttempts, lastFailureAt: lastFailureAt), .fail(error)]
        case .lock(let reason, let now):
            guard state != .uninitialized else { return [.fail(.notInitialized)] }
            return lock(reason: reason, now: now) + [.succeed]
        case .revoke(let reason, let now):
            guard state != .uninitialized || reason == .shutdown else { return [.fail(.notInitialized)] }
            if pending == .unlock { revokedDuringCheck = reason }
            return revoke(reason: reason, now: now) + [.succeed]
        case .wipeRequested(let hasPasscode, let now):
            if let refusal = refuseCheck(now: now) { return [refusal] }
            guard hasPasscode else { return [.fail(.passcodeRequired)] }
            return beginCheck(.wipe, now: now)
        case .authorizeRequested(let hasPasscode, let now):
            if let refusal = refuseCheck(now: now) { return [refusal] }
            guard hasPasscode else { return [.fail(.passcodeRequired)] }
            return beginCheck(.authorize, now: now)
        case .forceWipe(let reason, let now):
            guard state != .uninitialized else { return [] }
            var actions: [LifecycleAction] = []
            if pending != nil {
                // A check in flight is answered now; its late result is ignored.
                pending = nil
                revokedDuringCheck = nil
                actions.append(.fail(.revoked(reason: reason.rawValue)))
            }
            return actions + wipe(reason: reason, now: now)
        case .activity(let now):
            lastActivityAt = max(lastActivityAt, now)
            return []
        case .tick(let now):
            guard let deadline = nextDeadline, now >= deadline else { return [] }
            return lock(reason: .idleTimeout, now: now)
        case .policyChanged(let version, let now):
            return [.emit(event(.policyDidChange(policyVersion: version), .policy, now))]
        case .appEnforced(let appId, let pid, let action, let now):
            return [.emit(event(.appEnforced(appId: appId, pid: pid, enforcement: action), .policy, now))]
        case .signedOut(let provider, let now):
            return [.emit(event(.didSignOut(provider: provider), .userRequest, now))]
        }
    }

    // MARK: - Transitions

    private mutating func unlock(hasPasscode: Bool, now: Double) -> [LifecycleAction] {
        switch state {
        case .uninitialized:
            return [.fail(.notInitialized)]
        case .unlocked:
            lastActivityAt = now
            return [.succeed]
        case .lockedKeyHeld where withinGrace(now: now) && pending == nil:
            state = .unlocked
            lockedAt = nil
            lastActivityAt = now
            return [.emit(event(.didUnlock, .userRequest, now)), .succeed]
        case .lockedKeyHeld, .lockedNoKey:
            if let refusal = refuseCheck(now: now) { return [refusal] }
            guard hasPasscode else { return [.fail(.passcodeRequired)] }
            return beginCheck(.unlock, now: now)
        }
    }

    /// Refuses a passcode check that cannot start now, or returns nil.
    private func refuseCheck(now: Double) -> LifecycleAction? {
        if state == .uninitialized { return .fail(.notInitialized) }
        if pending != nil { return .fail(.busy) }
        let wait = retryAfter(now: now)
        if wait > 0 { return .fail(.retryLater(retryAfterSeconds: wait)) }
        return nil
    }

    /// Counts the attempt first (persisted before the check), then asks for the check.
    private mutating func beginCheck(_ check: PendingCheck, now: Double) -> [LifecycleAction] {
        pending = check
        lastFailureBeforeCheck = lastFailureAt
        failedAttempts += 1
        lastFailureAt = now
        let work: LifecycleAction = check == .changePasscode ? .rewrapMasterKey : .checkPasscode
        return [.persistFailedAttempts(count: failedAttempts, lastFailureAt: now), work]
    }

    private mutating func finishCheck(correct: Bool, hardwareAttemptsLeft: Int?, now: Double) -> [LifecycleAction] {
        guard let check = pending, check != .initialize else { return [] }
        pending = nil
        let revokedBy = revokedDuringCheck
        revokedDuringCheck = nil
        if correct {
            failedAttempts = 0
            lastFailureAt = nil
            var actions: [LifecycleAction] = [.persistFailedAttempts(count: 0, lastFailureAt: nil)]
            if check == .wipe { return actions + wipe(reason: .wipe, now: now) + [.succeed] }
            if check == .unlock, let revokedBy {
                // The key was revoked while the passcode was checked: the revocation wins.
                return actions + [.fail(.revoked(reason: revokedBy.rawValue))]
            }
            if check == .unlock {
                lastActivityAt = now
                if state == .lockedNoKey {
                    state = .lockedKeyHeld
                    actions.append(.installKey)
                    actions.append(.emit(event(.encryptionKeyAvailable(), .userRequest, now)))
                }
                if state != .unlocked {
                    state = .unlocked
                    lockedAt = nil
                    actions.append(.emit(event(.didUnlock, .userRequest, now)))
                }
            }
            return actions + [.succeed]
        }
        let left = max(0, configuration.maxAttempts - failedAttempts)
        if left == 0 {
            let action = configuration.onMaxAttempts
            if action == .lockout {
                // Locked out: the key goes, and each further attempt waits the longest back-off.
                let answer = CordonError.wrongPasscode(
                    attemptsLeft: 0, retryAfterSeconds: retryAfter(now: now), maxAttemptsAction: action.rawValue)
                return [.maxAttemptsReached] + revoke(reason: .maxAttempts, now: now) + [.fail(answer)]
            }
            // Wiped: the answer says so (`maxAttemptsAction: wipe` with no attempts left: the data is gone).
            let answer = CordonError.wrongPasscode(
                attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: action.rawValue)
            return [.maxAttemptsReached] + wipe(reason: .maxAttempts, now: now) + [.fail(answer)]
        }
        return [.fail(wrongPasscode(left: left, hardwareLeft: hardwareAttemptsLeft, now: now))]
    }

    /// A wrong passcode's answer: the attempts left before the tighter of the two limits, the
    /// max-attempts action's and the TPM's lockout, and which one it is.
    private func wrongPasscode(left: Int, hardwareLeft: Int?, now: Double) -> CordonError {
        let retry = retryAfter(now: now)
        guard let hardwareLeft, hardwareLeft < left else {
            return .wrongPasscode(attemptsLeft: left, retryAfterSeconds: retry)
        }
        return .wrongPasscode(
            attemptsLeft: max(0, hardwareLeft), retryAfterSeconds: retry, maxAttemptsLeft: left,
            hardwareAttemptsLeft: max(0, hardwareLeft))
    }

    private mutating func lock(reason: EventReason, now: Double) -> [LifecycleAction] {
        guard state == .unlocked else { return [] }
        if configuration.discardKeyOnLock { return revoke(reason: reason, now: now) }
        state = .lockedKeyHeld
        lockedAt = now
        graceAllowed = reason != .screenLock && reason != .suspend
        return [.emit(event(.didLock, reason, now))]
    }

    private mutating func revoke(reason: EventReason, now: Double) -> [LifecycleAction] {
        var actions: [LifecycleAction] = []
        if state == .unlocked {
            state = .lockedKeyHeld
            actions.append(.emit(event(.didLock, reason, now)))
        }
        if state == .lockedKeyHeld {
            state = .lockedNoKey
            lockedAt = now
            let deadline = now + Double(configuration.ackDeadlineMs) / 1000
            actions.append(.discardKey)
            actions.append(.emit(event(.encryptionKeyUnavailable(ackDeadline: deadline), reason, now)))
        }
        return actions
    }

    private mutating func wipe(reason: EventReason, now: Double) -> [LifecycleAction] {
        var actions = revoke(reason: reason, now: now)
        state = .uninitialized
        lockedAt = nil
        failedAttempts = 0
        lastFailureAt = nil
        actions.append(.eraseKeystore)
        actions.append(.persistFailedAttempts(count: 0, lastFailureAt: nil))
        actions.append(.emit(event(.wiped(), reason, now)))
        return actions
    }

    // MARK: - Helpers

    private func withinGrace(now: Double) -> Bool {
        guard let lockedAt, graceAllowed, configuration.reauthGraceSeconds > 0 else { return false }
        return now - lockedAt <= Double(configuration.reauthGraceSeconds)
    }

    private func passcodeProblem(length: Int) -> CordonError? {
        guard length >= configuration.minPasscodeLength else {
            return .invalidPasscode(
                reason: "the passcode must have at least \(configuration.minPasscodeLength) characters")
        }
        return nil
    }

    private mutating func event(_ payload: CordonEvent.Payload, _ reason: EventReason, _ now: Double) -> CordonEvent {
        seq += 1
        return CordonEvent(seq: seq, payload: payload, reason: reason, time: now, state: state)
    }

    /// The current state as a snapshot event (the first reply of a subscription).
    public func snapshot(now: Double) -> CordonEvent {
        CordonEvent(seq: seq, payload: .state, reason: .startup, time: now, state: state)
    }
}
