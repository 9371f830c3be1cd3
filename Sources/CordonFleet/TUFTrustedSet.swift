import Foundation

/// The metadata a client trusts (TUF client workflow, §5): the root, and the timestamp, snapshot
/// and targets roles last verified under it. A value: a refresh works on a copy and hands it back
/// only when every step verified, so nothing is persisted from a half-verified update.
public struct TUFTrustedSet: Sendable {
    /// The trusted root.
    public internal(set) var root: TUFRoot
    public internal(set) var timestamp: TUFTimestamp?
    public internal(set) var snapshot: TUFSnapshot?
    /// The top-level targets (`targets`) and delegated roles, by role name.
    public internal(set) var targets: [String: TUFTargets] = [:]
    /// How many distinct keys signed each targets role (a multi-device wipe needs the root's threshold).
    public internal(set) var signers: [String: Int] = [:]
    /// The latest clock reading of a verification: expiry is judged at no earlier time (the clock ratchet).
    public internal(set) var verifiedAt: Date?

    /// Trusts `root` (shipped with the client or persisted): it must be signed by a threshold of its own root keys.
    public init(root bytes: [UInt8]) throws(TUFError) {
        let root = try TUFRoot(bytes)
        try root.verify("root", root.envelope)
        self.root = root
    }

    /// Adds persisted metadata (`timestamp.json`, `snapshot.json`, `targets.json`, `<role>.json`) as the
    /// reference for rollback checks. Each must verify under the trusted root (or its delegator); one
    /// that does not (the keys were rotated) is dropped, which is how fast-forward recovery works.
    /// Expiry is not judged here: an expired file is still the floor for versions.
    public mutating func load(persisted files: [String: [UInt8]], verifiedAt: Date?) {
        self.verifiedAt = verifiedAt
        if let bytes = files["timestamp.json"], let timestamp = try? TUFTimestamp(bytes),
            (try? root.verify("timestamp", timestamp.envelope)) != nil
        {
            self.timestamp = timestamp
        }
        if let bytes = files["snapshot.json"], let snapshot = try? TUFSnapshot(bytes),
            (try? root.verify("snapshot", snapshot.envelope)) != nil
        {
            self.snapshot = snapshot
        }
        if let bytes = files["targets.json"], let targets = try? TUFTargets(bytes, role: "targets"),
            let count = try? root.verify("targets", targets.envelope)
        {
            self.targets["targets"] = targets
            signers["targets"] = count
            loadDelegations(of: targets, files: files, depth: 0)
        }
    }

    private mutating func loadDelegations(of delegator: TUFTargets, files: [String: [UInt8]], depth: Int) {
        guard depth < TUFRefresh.Limits.maximumDelegationDepth else { return }
        for role in delegator.delegations where targets[role.name] == nil {
            guard let bytes = files["\(role.name).json"], let delegated = try? TUFTargets(bytes, role: role.name),
                let count = try? delegator.verify(role, delegated.envelope)
            else { continue }
            targets[role.name] = delegated
            signers[role.name] = count
            loadDelegations(of: delegated, files: files, depth: depth + 1)
        }
    }

    /// The files to persist, by name: the raw bytes as served.
    public var files: [String: [UInt8]] {
        var out = ["root.json": root.envelope.raw]
        if let timestamp { out["timestamp.json"] = timestamp.envelope.raw }
        if let snapshot { out["snapshot.json"] = snapshot.envelope.raw }
        for (name, role) in targets { out["\(name).json"] = role.envelope.raw }
        return out
    }

    /// The versions trusted, by role.
    public var versions: [String: Int] {
        var out = ["root": root.version]
        if let timestamp { out["timestamp"] = timestamp.version }
        if let snapshot { out["snapshot"] = snapshot.version }
        for (name, role) in targets { out[name] = role.version }
        return out
    }

    /// The earliest expiry among the trusted timestamp and root: past it, the set is stale.
    public var freshUntil: Date? {
        guard let timestamp else { return nil }
        return min(timestamp.envelope.expires, root.envelope.expires)
    }

    /// The file `path` resolves to (TUF §5.7.3: a preorder search of the delegations, stopping at a
    /// terminating role that covers it), or nil when no trusted role lists it.
    public func target(_ path: String) -> TUFTargetFile? {
        guard let top = targets["targets"] else { return nil }
        var visited = Set<String>()
        return search(top, path, visited: &visited, depth: 0).file
    }

    private func search(_ role: TUFTargets, _ path: String, visited: inout Set<String>, depth: Int) -> (
        file: TUFTargetFile?, stop: Bool
    ) {
        if let file = role.targets[path] { return (file, true) }
        guard depth < TUFRefresh.Limits.maximumDelegationDepth else { return (nil, true) }
        for delegated in role.delegations where delegated.covers(path) {
            if visited.insert(delegated.name).inserted, let metadata = targets[delegated.name] {
                let found = search(metadata, path, visited: &visited, depth: depth + 1)
                if found.file != nil { return found }
            }
            if delegated.terminating { return (nil, true) }
        }
        return (nil, false)
    }

    /// Every target path any trusted role lists, each as the search resolves it.
    public var allTargets: [String: TUFTargetFile] {
        var out: [String: TUFTargetFile] = [:]
        for role in targets.values {
            for path in role.targets.keys where out[path] == nil {
                if let file = target(path) { out[path] = file }
            }
        }
        return out
    }
}
