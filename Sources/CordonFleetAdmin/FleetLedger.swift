import CordonFleet
import CordonProtocol
import Foundation

/// The admin's bookkeeping, `fleet.json`: each role's version, expiry, keys and threshold, the
/// root's wipe threshold, and each device's last command counter. Public keys only: private keys
/// are in `keys/` (or offline, for root).
public struct FleetLedger: Codable, Sendable, Equatable {
    /// One role's state.
    public struct Role: Codable, Sendable, Equatable {
        /// The version of the role's current metadata (0 before the first).
        public var version: Int
        /// When the current metadata expires (TUF form, UTC).
        public var expires: String
        /// How long a new version stays valid, in seconds.
        public var expirySeconds: Int
        public var threshold: Int
        public var keyIDs: [String]
    }

    /// A public key the repository lists.
    public struct Key: Codable, Sendable, Equatable {
        public var role: FleetRole
        /// The Ed25519 public key, hex.
        public var publicKey: String
    }

    /// What the admin last sent a device.
    public struct Device: Codable, Sendable, Equatable {
        /// The counter of the last command issued to it (its commands are numbered 1, 2, 3 …).
        public var counter: Int
        public var lastKind: String
        public var lastIssued: String
    }

    /// `cordon-fleet-v1`.
    public var format = "cordon-fleet-v1"
    /// How many distinct command keys must sign a wipe of more than one device (the root's `x-cordon`).
    public var wipeThreshold: Int
    /// By role name.
    public var roles: [String: Role]
    /// By key id.
    public var keys: [String: Key]
    /// By device id.
    public var devices: [String: Device] = [:]

    /// The state of `role`.
    public func role(_ role: FleetRole) -> Role {
        roles[role.rawValue]
            ?? Role(version: 0, expires: "", expirySeconds: Int(role.defaultExpiry), threshold: 1, keyIDs: [])
    }

    /// Changes the state of `role`.
    mutating func update(_ role: FleetRole, _ body: (inout Role) -> Void) {
        var state = self.role(role)
        body(&state)
        roles[role.rawValue] = state
    }

    /// The TUF public keys of `role`, in the role's order.
    func publicKeys(_ role: FleetRole) -> [TUFKey] {
        self.role(role).keyIDs.compactMap { id in
            keys[id].flatMap { TUFHex.decode($0.publicKey) }.map { TUFKey(id: id, ed25519: $0) }
        }
    }

    /// The root's keys and roles as TUF `signed` metadata.
    func rootSigned(expires: Date) -> JSONValue {
        var roleKeys: [String: TUFRoleKeys] = [:]
        var all: [TUFKey] = []
        for role in FleetRole.allCases where role.isTopLevel {
            let state = self.role(role)
            roleKeys[role.rawValue] = TUFRoleKeys(keyIDs: state.keyIDs, threshold: state.threshold)
            for key in publicKeys(role) where !all.contains(key) { all.append(key) }
        }
        return TUFWriter.root(
            version: role(.root).version, expires: expires, keys: all, roles: roleKeys, wipeThreshold: wipeThreshold)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(FleetAdminError) -> FleetLedger {
        let ledger: FleetLedger
        do {
            ledger = try JSONDecoder().decode(FleetLedger.self, from: Data(bytes))
        } catch {
            throw FleetAdminError(
                .workspace, "\(path) is not a fleet workspace's bookkeeping: \(error)",
                hint: "restore fleet.json from a backup; it is written only by `cordon fleet`")
        }
        guard ledger.format == "cordon-fleet-v1" else {
            throw FleetAdminError(
                .workspace, "\(path): format \"\(ledger.format)\" is not cordon-fleet-v1",
                hint: "use the `cordon` that made this workspace, or a newer one")
        }
        return ledger
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data()) + [UInt8(ascii: "\n")]
    }
}
