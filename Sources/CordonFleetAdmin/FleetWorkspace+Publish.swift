import CordonFleet
import Foundation

/// What `publish` did.
public struct FleetPublishResult: Sendable {
    /// Target paths added, changed and removed.
    public var added: [String]
    public var changed: [String]
    public var removed: [String]
    /// Policy files published without a `.sig`.
    public var unsigned: [String]
    /// The new versions of targets, snapshot and timestamp (unchanged when nothing differed).
    public var versions: [FleetRole: Int]
    /// Whether anything was signed (an identical policy set changes nothing).
    public var published: Bool
}

extension FleetWorkspace {
    /// Publishes the policy files of `directory` as the repository's `policies/*` targets (files no
    /// longer there are removed): targets, snapshot and timestamp get new versions.
    public mutating func publish(policies directory: String, now: Date = Date()) throws(FleetAdminError)
        -> FleetPublishResult
    {
        let set = try FleetPolicySet(directory: directory)
        return try transaction { (workspace) throws(FleetAdminError) -> FleetPublishResult in
            let current = try workspace.currentFiles(.targets)
            let added = set.files.keys.filter { current[$0] == nil }.sorted()
            let changed = set.files.keys.filter { current[$0] != nil && current[$0] != set.files[$0] }.sorted()
            let removed = current.keys.filter { set.files[$0] == nil }.sorted()
            let published = !(added.isEmpty && changed.isEmpty && removed.isEmpty)
            if published {
                try workspace.commit(FleetRelease(targets: true, policies: set.files), now: now)
            }
            var versions: [FleetRole: Int] = [:]
            for role in [FleetRole.targets, .snapshot, .timestamp] {
                versions[role] = workspace.ledger.role(role).version
            }
            return FleetPublishResult(
                added: added, changed: changed, removed: removed, unsigned: set.unsigned, versions: versions,
                published: published)
        }
    }
}
