import CordonProtocol

/// What the lifecycle machine reacts to. Every input carries the current time (Unix seconds).
public enum LifecycleInput: Sendable, Equatable {
    /// The agent started: whether a keystore exists and the persisted attempt counter.
    case start(initialized: Bool, failedAttempts: Int, lastFailureAt: Double?, now: Double)
    /// `Initialize` was called with a passcode of this length.
    case initializeRequested(passcodeLength: Int, now: Double)
    /// The master key was created and stored (or creating it failed).
    case initializeFinished(success: Bool, now: Double)
    /// `Unlock` was called, with or without a passcode.
    case unlockRequested(hasPasscode: Bool, now: Double)
    /// `ChangePasscode` was called; the new passcode has this length.
    case changePasscodeRequested(newPasscodeLength: Int, now: Double)
    /// The passcode check (unwrapping the master key) finished. `hardwareAttemptsLeft`: the wrong
    /// passcodes the TPM sealing the key still accepts before its dictionary-attack lockout, read
    /// after the check (nil without a TPM); a wrong passcode's answer shows the tighter limit.
    case passcodeChecked(correct: Bool, now: Double, hardwareAttemptsLeft: Int? = nil)
    /// The passcode check could not run (the counter could not be stored); nothing was checked, and
    /// the attempt stays counted.
    case checkAborted(now: Double)
    /// The TPM refused the check before it evaluated the passcode (the bound PCRs changed, it is in
    /// lockout, unreachable, or no longer loads the sealed key): no guess was made, so the attempt
    /// counted before the check is given back (and stored), and the request is answered `error`.
    /// Never for a passcode the TPM rejected (`authorizationFailed`): that is `passcodeChecked`.
    case checkRefused(CordonError, now: Double)
    /// A lock trigger fired (explicit, idle, screen lock, suspend).
    case lock(reason: EventReason, now: Double)
    /// The key must go (logout, policy, shutdown).
    case revoke(reason: EventReason, now: Double)
    /// The policy wipes the container now (a condition with action `wipe`), whatever its state.
    case forceWipe(reason: EventReason, now: Double)
    /// `Wipe` was called by the user (confirmed), with or without the passcode it needs.
    case wipeRequested(hasPasscode: Bool, now: Double)
    /// An administrator's call needs the passcode checked (and counted) before it runs.
    case authorizeRequested(hasPasscode: Bool, now: Double)
    /// The user or an app was active.
    case activity(now: Double)
    /// Time passed: idle timeouts are checked.
    case tick(now: Double)
    /// A new policy is in force (its version hash); subscribers hear `PolicyDidChange`.
    case policyChanged(version: String, now: Double)
    /// The agent enforced a missed acknowledgement on an app (or thawed it); subscribers hear
    /// `AppEnforced`.
    case appEnforced(appId: String, pid: Int, action: EnforcementAction, now: Double)
    /// The user signed out of identity provider `provider`; subscribers hear `DidSignOut`.
    case signedOut(provider: String, now: Double)
}

/// What the server must do after an input, in order.
public enum LifecycleAction: Sendable, Equatable {
    /// Send this event to every subscriber.
    case emit(CordonEvent)
    /// Durably store the failed-attempt counter before going on.
    case persistFailedAttempts(count: Int, lastFailureAt: Double?)
    /// Create a master key, wrap it under the pending passcode and store it.
    case createMasterKey
    /// Unwrap the master key with the pending passcode (the counter is already stored).
    case checkPasscode
    /// Re-wrap the master key under the pending new passcode and store it.
    case rewrapMasterKey
    /// Keep the master key just unwrapped: the container now holds it.
    case installKey
    /// Zero every copy of the master key and of app keys.
    case discardKey
    /// `passcode.maxAttempts` was reached (whatever `onMaxAttempts` does next): every way to
    /// unlock without the passcode goes now (the key kept for fingerprint unlock is zeroed).
    case maxAttemptsReached
    /// Crypto-erase: delete the wrapped key; the data it protected is unrecoverable.
    case eraseKeystore
    /// Answer the pending request: success.
    case succeed
    /// Answer the pending request with this error.
    case fail(CordonError)
}
