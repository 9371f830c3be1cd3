/// The repository's signing roles: the four TUF top-level roles and the delegated `commands`.
public enum FleetRole: String, Sendable, Codable, CaseIterable, Comparable {
    case root, timestamp, snapshot, targets, commands

    /// Whether the root lists its keys (all but `commands`, which `targets` delegates).
    public var isTopLevel: Bool { self != .commands }

    /// The roles whose keys stay in the workspace (all but root).
    public static let online: [FleetRole] = [.timestamp, .snapshot, .targets, .commands]

    /// `root, timestamp, snapshot, targets, commands`.
    public static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The default time each role's metadata stays valid after signing.
    public var defaultExpiry: Double {
        switch self {
        case .root: 365 * 86_400
        case .timestamp: 86_400
        case .snapshot, .targets, .commands: 30 * 86_400
        }
    }

    public static func < (lhs: FleetRole, rhs: FleetRole) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}
