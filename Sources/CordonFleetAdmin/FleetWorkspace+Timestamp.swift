import CordonFleet
import Foundation

/// What `timestamp` did.
public struct FleetTimestampResult: Sendable {
    public var version: Int
    public var expires: Date
    /// Online roles re-signed because their metadata was within a quarter of its validity of expiring.
    public var renewed: [FleetRole]
    /// Warnings for the admin (the root expiring soon, a renewal that needs more command keys).
    public var warnings: [String]
}

extension FleetWorkspace {
    /// Re-signs the timestamp (what cron runs, e.g. hourly): a new version naming the same snapshot,
    /// valid for the timestamp's expiry. Snapshot, targets and commands within a quarter of their
    /// validity of expiring are re-signed too, with the keys in `keys/`.
    public mutating func resignTimestamp(now: Date = Date()) throws(FleetAdminError) -> FleetTimestampResult {
        try transaction { (workspace) throws(FleetAdminError) -> FleetTimestampResult in
            var release = FleetRelease()
            var renewed: [FleetRole] = []
            var warnings: [String] = []
            for role in [FleetRole.commands, .targets, .snapshot] where workspace.expiresSoon(role, now: now) {
                if role == .commands {
                    let files = try workspace.currentFiles(.commands)
                    let signers = try workspace.onlineKeys(.commands)
                    do throws(FleetAdminError) {
                        try workspace.checkPendingWipes(files, signers: signers.count, now: now)
                    } catch {
                        warnings.append("commands not renewed: \(error.message)")
                        continue
                    }
                    release.commands = true
                } else if role == .targets {
                    release.targets = true
                } else {
                    release.snapshot = true
                }
                renewed.append(role)
            }
            let root = workspace.ledger.role(.root)
            if let expires = TUFDate.parse(root.expires), expires.timeIntervalSince(now) < 30 * 86_400 {
                warnings.append(
                    "root v\(root.version) expires \(root.expires): re-sign it with "
                        + "`cordon fleet renew-root \(workspace.directory) --root-key FILE`")
            }
            try workspace.commit(release, now: now)
            let timestamp = workspace.ledger.role(.timestamp)
            return FleetTimestampResult(
                version: timestamp.version, expires: TUFDate.parse(timestamp.expires) ?? now, renewed: renewed,
                warnings: warnings)
        }
    }

    /// Whether `role`'s current metadata has less than a quarter of its validity left.
    func expiresSoon(_ role: FleetRole, now: Date) -> Bool {
        let state = ledger.role(role)
        guard let expires = TUFDate.parse(state.expires) else { return true }
        return expires.timeIntervalSince(now) < Double(state.expirySeconds) / 4
    }
}
