/// Where fleetd keeps and puts things (docs/FLEET.md, "Files").
public struct FleetdPaths: Sendable, Equatable {
    /// fleetd's own state: the device key, trusted metadata, the audit log (root's, 0700).
    public var stateDirectory: String
    /// What the per-user agents read: `commands/`, `status.json`, `report.json` (root's, 0755).
    public var fleetDirectory: String
    /// The admin policy directory the agents watch; fleetd installs the repository's policies there.
    public var policyDirectory: String

    public init(
        stateDirectory: String = "/var/lib/cordon-fleetd", fleetDirectory: String = "/var/lib/cordon/fleet",
        policyDirectory: String = "/etc/cordon/policy.d"
    ) {
        self.stateDirectory = stateDirectory
        self.fleetDirectory = fleetDirectory
        self.policyDirectory = policyDirectory
    }
}
