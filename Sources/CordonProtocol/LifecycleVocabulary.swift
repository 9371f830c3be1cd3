/// The four lifecycle states of a container (docs/ARCHITECTURE.md, "The lifecycle").
public enum LifecycleState: String, Sendable, Codable, CaseIterable {
    /// No passcode has been set.
    case uninitialized
    /// Locked and no key in memory: the passcode is needed.
    case lockedNoKey
    /// Unlocked: the key is available.
    case unlocked
    /// Locked, but the key stays in memory (apps may finish background work).
    case lockedKeyHeld

    /// Whether the container is locked (every state but `unlocked`).
    public var isLocked: Bool { self != .unlocked }
    /// Whether the master key is in the agent's memory.
    public var keyAvailable: Bool { self == .unlocked || self == .lockedKeyHeld }

    /// The state as a user sees it (`cordon lock` says "locked", whether the key is held or
    /// not): the word every CLI sentence uses, never the protocol's name.
    public var userName: String {
        switch self {
        case .uninitialized: "not set up"
        case .lockedNoKey, .lockedKeyHeld: "locked"
        case .unlocked: "unlocked"
        }
    }

    /// `userName` of a state's protocol name (as an error's `state` parameter carries it); an
    /// unknown name as it is.
    public static func userName(_ rawValue: String) -> String {
        LifecycleState(rawValue: rawValue)?.userName ?? rawValue
    }
}

/// The kinds of events the agent sends to subscribers.
public enum EventKind: String, Sendable, Codable, CaseIterable {
    /// A snapshot of the current state: the first reply of every subscription.
    case state = "State"
    case encryptionKeyAvailable = "EncryptionKeyAvailable"
    case encryptionKeyUnavailable = "EncryptionKeyUnavailable"
    case didLock = "DidLock"
    case didUnlock = "DidUnlock"
    case wiped = "Wiped"
    case policyDidChange = "PolicyDidChange"
    /// The agent enforced a revocation on an app that did not acknowledge in time (or thawed it).
    case appEnforced = "AppEnforced"
    /// Another app handed this app a document (sent to the target app only; its seq is that of
    /// the latest broadcast event, it does not advance the order).
    case openDocument = "OpenDocument"
    /// A posture check the policy sets to `warn` fails for this app (sent to that app only; its
    /// `posture` names the checks and their evidence; its seq is that of the latest broadcast event).
    case postureWarning = "PostureWarning"
    /// The user signed out of an identity provider (`provider`): every app drops what it holds of
    /// that session (the SDK's logout handler).
    case didSignOut = "DidSignOut"
}

/// What the agent does to an app that did not acknowledge a revocation by its deadline
/// (the policy's `lock.onAckTimeout`), and `thaw` when a frozen app's key is back.
public enum EnforcementAction: String, Sendable, Codable, CaseIterable {
    /// SIGSTOP to the app's process group; SIGCONT (`thaw`) once the key is available again.
    case freeze
    /// SIGTERM to the app's process group, then SIGKILL after a grace.
    case terminate
    /// The agent closes the app's connections.
    case disconnect
    /// The agent only logs and audits it.
    case report
    /// A frozen app was sent SIGCONT: its key is available again.
    case thaw
}

/// Why an event happened.
public enum EventReason: String, Sendable, Codable, CaseIterable {
    case userRequest
    case idleTimeout
    case screenLock
    case suspend
    case logout
    case maxAttempts
    case policy
    case wipe
    case shutdown
    case startup
    /// A device posture check the policy sets to `block` or `wipe` fails (`conditions`).
    case posture
    /// Never sent by the agent: CordonKit reports a lost connection with it.
    case agentUnavailable
}

/// How an app says it has complied with an event.
public enum AcknowledgeStatus: String, Sendable, Codable, CaseIterable {
    /// The app halted its I/O and dropped the key (answer to `EncryptionKeyUnavailable`).
    case halted
    /// The app handled the event (any other kind).
    case handled
}

/// Whether an app has done what the last event asked of it.
public enum Compliance: String, Sendable, Codable, CaseIterable {
    /// Nothing is pending.
    case compliant
    /// An acknowledgement is awaited and its deadline has not passed.
    case pending
    /// The deadline passed without an acknowledgement.
    case overdue
    /// The app is registered unmanaged: nothing is asked of it.
    case unmanaged
    /// The deadline passed and the agent froze the app (SIGSTOP) until the key is back.
    case frozen
    /// The deadline passed and the agent terminated the app.
    case terminated
}

/// What reaching the maximum of failed attempts does (`passcode.onMaxAttempts`): lock out (revoke,
/// then one attempt per maximum back-off delay) or wipe (crypto-erase the container).
public enum MaxAttemptsAction: String, Sendable, CaseIterable {
    case lockout, wipe
}
