/// When a fingerprint may unlock instead of the passcode, as a pure state machine with the time
/// given (docs/ARCHITECTURE.md, "Keys"; docs/THREAT-MODEL.md, "Fingerprint unlock").
///
/// A fingerprint never unlocks the first time after the agent starts (the key is only in the
/// passcode's wrapping then), nor after a logout, nor once `reauthSeconds` have passed since the
/// last passcode unlock: the passcode is needed, and it arms the gate again. The gate remembers
/// why it was disarmed, so the refusal names the true reason even after the kept key is zeroed.
public struct FingerprintGate: Sendable, Equatable {
    /// The re-authentication limit: 48 hours after the last passcode unlock.
    public static let defaultReauthSeconds: Double = 48 * 3600

    /// Seconds after a passcode unlock during which a fingerprint may unlock.
    public var reauthSeconds: Double
    /// When the passcode last unlocked since the agent started (nil: not yet, or disarmed).
    public private(set) var lastPasscodeUnlockAt: Double?
    /// Fingerprint unlocks since that passcode unlock.
    public private(set) var fingerprintUnlocks = 0
    /// Why the gate was last disarmed, when that is a refusal of its own (`reauthLimit`,
    /// `loggedOut`); nil before the first passcode unlock and after one.
    public private(set) var disarmedFor: Refusal?

    /// Why a fingerprint may not unlock now.
    public enum Refusal: Sendable, Equatable {
        /// `passcode.biometrics` is `disabled`.
        case disabledByPolicy
        /// The user has not opted in.
        case notOptedIn
        /// No passcode unlock since the agent started (or since the gate was disarmed).
        case passcodeFirst
        /// More than `reauthSeconds` since the last passcode unlock.
        case reauthLimit
        /// The user logged out (`cordon logout`) since the last passcode unlock.
        case loggedOut
    }

    public init(reauthSeconds: Double = Self.defaultReauthSeconds) {
        self.reauthSeconds = reauthSeconds
    }

    /// The passcode unlocked at `now`: fingerprints may unlock until `now + reauthSeconds`.
    public mutating func passcodeUnlocked(now: Double) {
        lastPasscodeUnlockAt = now
        fingerprintUnlocks = 0
        disarmedFor = nil
    }

    /// A fingerprint unlocked.
    public mutating func fingerprintUnlocked() {
        fingerprintUnlocks += 1
    }

    /// Forgets the last passcode unlock (wipe, opt-out, policy `disabled`, max attempts, logout,
    /// limit passed); `reason` is what a fingerprint unlock is refused with until the next
    /// passcode unlock (nil: `passcodeFirst`).
    public mutating func disarm(reason: Refusal? = nil) {
        lastPasscodeUnlockAt = nil
        fingerprintUnlocks = 0
        disarmedFor = reason
    }

    /// When the passcode is needed again, if armed.
    public var deadline: Double? { lastPasscodeUnlockAt.map { $0 + reauthSeconds } }

    /// Whether the re-authentication limit has passed at `now` (false when not armed).
    public func expired(now: Double) -> Bool {
        guard let deadline else { return false }
        return now > deadline
    }

    /// Why a fingerprint may not unlock at `now`, or nil when it may.
    public func refusal(policyAllows: Bool, optedIn: Bool, now: Double) -> Refusal? {
        guard policyAllows else { return .disabledByPolicy }
        guard optedIn else { return .notOptedIn }
        guard lastPasscodeUnlockAt != nil else { return disarmedFor ?? .passcodeFirst }
        return expired(now: now) ? .reauthLimit : nil
    }
}
