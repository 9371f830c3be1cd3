import CordonFleet
import Foundation

/// A workspace's state as `status` shows it.
public struct FleetStatus: Sendable {
    /// One role.
    public struct Role: Sendable {
        public var role: FleetRole
        public var version: Int
        public var expires: String
        /// Whether the current metadata has expired.
        public var expired: Bool
        public var threshold: Int
        public var keyIDs: [String]
        /// The key ids whose private key is in `keys/`.
        public var keysHere: [String]
    }

    /// One device and its last command.
    public struct Device: Sendable {
        public var id: String
        public var counter: Int
        public var lastKind: String
        public var lastIssued: String
    }

    public var roles: [Role]
    public var wipeThreshold: Int
    public var devices: [Device]
    /// The policy targets listed now.
    public var policies: [String]
}

extension FleetWorkspace {
    /// Versions, expiries, keys, devices and counters, and the policies listed.
    public func status(now: Date = Date()) throws(FleetAdminError) -> FleetStatus {
        var roles: [FleetStatus.Role] = []
        for role in FleetRole.allCases {
            let state = ledger.role(role)
            let expired = TUFDate.parse(state.expires).map { $0 <= now } ?? true
            roles.append(
                FleetStatus.Role(
                    role: role, version: state.version, expires: state.expires, expired: expired,
                    threshold: state.threshold, keyIDs: state.keyIDs,
                    keysHere: state.keyIDs.filter { FleetFiles.exists(keyPath(role, $0)) }))
        }
        let devices = ledger.devices.sorted { $0.key < $1.key }.map {
            FleetStatus.Device(
                id: $0.key, counter: $0.value.counter, lastKind: $0.value.lastKind, lastIssued: $0.value.lastIssued)
        }
        let policies = try currentFiles(.targets).keys.sorted()
        return FleetStatus(roles: roles, wipeThreshold: ledger.wipeThreshold, devices: devices, policies: policies)
    }
}
