import CordonProtocol

/// The settings the lifecycle follows, read from the policy in force (CordonServer's
/// `LifecycleConfiguration(_:backoff:)`, docs/ARCHITECTURE.md "Policy settings").
public struct LifecycleConfiguration: Sendable, Equatable {
    /// Seconds without activity before the container locks; 0 disables the idle lock.
    public var idleTimeoutSeconds: Int
    /// Seconds after a lock during which unlocking needs no passcode (key still held).
    public var reauthGraceSeconds: Int
    /// Whether a lock also discards the key (then every lock is a revocation).
    public var discardKeyOnLock: Bool
    /// Failed passcode attempts before the container is wiped.
    public var maxAttempts: Int
    /// Milliseconds an app has to acknowledge `EncryptionKeyUnavailable`.
    public var ackDeadlineMs: Int
    /// The shortest passcode accepted by `Initialize` and `ChangePasscode`.
    public var minPasscodeLength: Int
    /// The back-off between failed attempts.
    public var backoff: Backoff
    /// What reaching `maxAttempts` does: wipe (crypto-erase) or lock out (revoke, then only
    /// one attempt per maximum back-off delay).
    public var onMaxAttempts: MaxAttemptsAction

    /// Settings with every value given: the policy-governed ones have no default here, because
    /// their defaults are the built-in policy's (declared once in `CordonPolicy`'s `PolicyKeys`;
    /// the agent starts from `LifecycleConfiguration.builtin` and then follows the policy).
    public init(
        idleTimeoutSeconds: Int, reauthGraceSeconds: Int, discardKeyOnLock: Bool, maxAttempts: Int,
        ackDeadlineMs: Int, minPasscodeLength: Int, backoff: Backoff = Backoff(), onMaxAttempts: MaxAttemptsAction
    ) {
        self.onMaxAttempts = onMaxAttempts
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.reauthGraceSeconds = reauthGraceSeconds
        self.discardKeyOnLock = discardKeyOnLock
        self.maxAttempts = maxAttempts
        self.ackDeadlineMs = ackDeadlineMs
        self.minPasscodeLength = minPasscodeLength
        self.backoff = backoff
    }
}

/// Growing delay after failed passcode attempts: free attempts, then doubling up to a cap.
public struct Backoff: Sendable, Equatable {
    /// Failures allowed before any delay.
    public var freeAttempts: Int
    /// The first delay, in seconds; each further failure doubles it.
    public var baseSeconds: Double
    /// The longest delay, in seconds.
    public var maxSeconds: Double

    public init(freeAttempts: Int = 3, baseSeconds: Double = 1, maxSeconds: Double = 300) {
        self.freeAttempts = freeAttempts
        self.baseSeconds = baseSeconds
        self.maxSeconds = maxSeconds
    }

    /// The delay after `failures` consecutive failed attempts.
    public func delay(afterFailures failures: Int) -> Double {
        guard failures > freeAttempts, baseSeconds > 0 else { return 0 }
        let exponent = min(failures - freeAttempts - 1, 30)
        return min(baseSeconds * Double(1 << exponent), maxSeconds)
    }
}
