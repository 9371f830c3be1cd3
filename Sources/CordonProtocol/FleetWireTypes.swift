/// The fleet as the agent sees it (`Status.fleet`; docs/ARCHITECTURE.md, "Fleet commands in the
/// agent"): present while the fleet directory exists.
public struct FleetStatus: Sendable, Codable, Equatable {
    /// The device id `status.json` names; absent until cordon-fleetd wrote it.
    public var device: String?
    /// When the repository's metadata last verified (seconds since 1970).
    public var verifiedAt: Double?
    /// From when the policy counts as stale (seconds since 1970).
    public var staleAfter: Double?
    /// Whether the policy is stale now (`status.json` missing counts as stale).
    public var stale: Bool
    /// `conditions.policyStale` in force: `off`, `warn`, `block` or `lock`.
    public var policyStale: String
    /// The last command this container executed or refused: `#COUNTER KIND STATE`.
    public var lastCommand: String?
    /// When it was recorded (seconds since 1970).
    public var lastCommandAt: Double?
    /// What the agent could not read or check (the commands directory, `status.json`).
    public var problem: String?

    public init(
        device: String?, verifiedAt: Double?, staleAfter: Double?, stale: Bool, policyStale: String,
        lastCommand: String? = nil, lastCommandAt: Double? = nil, problem: String? = nil
    ) {
        self.device = device
        self.verifiedAt = verifiedAt
        self.staleAfter = staleAfter
        self.stale = stale
        self.policyStale = policyStale
        self.lastCommand = lastCommand
        self.lastCommandAt = lastCommandAt
        self.problem = problem
    }
}
