import CordonCore
import CordonProtocol

/// Everything the agent is started with.
public struct AgentConfiguration: Sendable {
    public var paths: CordonPaths
    public var lifecycle: LifecycleConfiguration
    public var limits: ConnectionLimits
    /// INSECURE: use near-free KDF parameters. For tests only; logged loudly.
    public var insecureFastKDF: Bool
    /// How long one passcode derivation should take when tuning scrypt.
    public var kdfTargetSeconds: Double
    /// The uid allowed to connect (the agent's own).
    public var allowedUID: UInt32

    public init(
        paths: CordonPaths, lifecycle: LifecycleConfiguration = LifecycleConfiguration(),
        limits: ConnectionLimits = .standard, insecureFastKDF: Bool = false, kdfTargetSeconds: Double = 0.25,
        allowedUID: UInt32
    ) {
        self.paths = paths
        self.lifecycle = lifecycle
        self.limits = limits
        self.insecureFastKDF = insecureFastKDF
        self.kdfTargetSeconds = kdfTargetSeconds
        self.allowedUID = allowedUID
    }
}
