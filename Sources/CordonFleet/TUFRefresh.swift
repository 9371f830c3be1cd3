import Foundation

/// One refresh of a TUF repository's metadata (client workflow §5.3–§5.6), as a pure machine: it asks
/// for files, the caller fetches them (HTTPS, a directory, a test's dictionary) and hands back what
/// came, and the machine ends with a new trusted set, "nothing new", or the first refusal. The
/// trusted set it started from is never changed; the caller persists the result's files.
public struct TUFRefresh: Sendable {
    /// Caps on what is fetched (the endless-data attack): the caller stops reading past `maximumLength`.
    public enum Limits {
        public static let root = 512 * 1024
        public static let timestamp = 16 * 1024
        public static let snapshot = 2 * 1024 * 1024
        public static let targets = 5 * 1024 * 1024
        /// Root versions followed in one refresh.
        public static let maximumRootRotations = 32
        /// Delegated roles followed in one refresh, and their depth.
        public static let maximumDelegatedRoles = 64
        public static let maximumDelegationDepth = 8
    }

    /// A file the machine needs.
    public struct Fetch: Sendable, Equatable {
        /// The path under the repository's base URL (`3.root.json`, `timestamp.json`, `7.snapshot.json`).
        public var path: String
        /// Read no more than this; more is a `length` refusal.
        public var maximumLength: Int
        /// Whether the caller may answer `notModified` (the timestamp, fetched with its ETag).
        public var conditional: Bool
    }

    /// What came back for a fetch.
    public enum Reply: Sendable {
        case data([UInt8])
        /// 404: for the next root version this ends the chain; for anything else it is a refusal.
        case notFound
        /// 304 for the timestamp: the one the caller already has is current.
        case notModified
        /// The server sent more than `maximumLength`: the caller stopped reading (endless data).
        case tooLong
        /// The transport failed; the refresh ends with `transport` and nothing changes.
        case failed(String)
    }

    /// The next thing to do.
    public enum Step: Sendable {
        case fetch(Fetch)
        case finished(Outcome)
    }

    /// How the refresh ended.
    public enum Outcome: Sendable {
        /// New metadata verified: persist `set.files`.
        case updated(TUFTrustedSet)
        /// The repository has nothing newer; the trusted set (with its clock ratchet moved) stands.
        case unchanged(TUFTrustedSet)
        /// Refused: the trusted set is kept as it was.
        case refused(TUFError)
    }

    private enum Phase {
        case root(next: Int, rotations: Int)
        case timestamp
        case snapshot(version: Int)
        case targets(version: Int)
        case delegated(name: String, version: Int)
        case done
    }

    private var set: TUFTrustedSet
    private let now: Date
    private var phase: Phase
    private var changed = false
    /// Delegated roles still to load: (role, the role that delegates it).
    private var pending: [(role: TUFDelegatedRole, delegator: String, depth: Int)] = []
    private var loadedRoles = 0
    /// Delegated roles trusted before a new top-level targets arrived: reused when still delegated and current.
    private var previousDelegated: [String: TUFTargets] = [:]

    /// A refresh of `trusted` judged at `now` (or the ratchet, if later).
    public init(trusted: TUFTrustedSet, now: Date) {
        set = trusted
        self.now = max(now, trusted.verifiedAt ?? now)
        phase = .root(next: trusted.root.version + 1, rotations: 0)
    }

    /// The first fetch.
    public mutating func start() -> Step {
        let next = set.root.version + 1
        return .fetch(Fetch(path: "\(next).root.json", maximumLength: Limits.root, conditional: false))
    }

    /// The outcome when the server says the timestamp held is still current (HTTP 304): nothing
    /// changed, provided nothing trusted has expired by now (a server that freezes the repository
    /// by answering 304 forever is caught here).
    public mutating func confirmUnchanged() -> Outcome {
        phase = .done
        do throws(TUFError) {
            guard let timestamp = set.timestamp else {
                throw TUFError(.notFound, role: "timestamp", "304 with no timestamp held")
            }
            try checkExpiry(set.root.envelope, role: "root")
            try checkExpiry(timestamp.envelope, role: "timestamp")
            if let snapshot = set.snapshot { try checkExpiry(snapshot.envelope, role: "snapshot") }
            for (name, role) in set.targets.sorted(by: { $0.key < $1.key }) {
                try checkExpiry(role.envelope, role: name)
            }
        } catch {
            return .refused(error)
        }
        set.verifiedAt = now
        return .unchanged(set)
    }

    /// Feeds what came for the last fetch; returns the next step.
    public mutating func receive(_ reply: Reply) -> Step {
        do {
            return try advance(reply)
        } catch {
            phase = .done
            return .finished(.refused(error))
        }
    }

    private mutating func advance(_ reply: Reply) throws(TUFError) -> Step {
        if case .failed(let reason) = reply { throw TUFError(.transport, role: currentRole, reason) }
        if case .tooLong = reply {
            throw TUFError(.length, role: currentRole, "the server sent more than this client reads for it")
        }
        switch phase {
        case .root(let next, let rotations):
            return try receiveRoot(reply, next: next, rotations: rotations)
        case .timestamp:
            return try receiveTimestamp(reply)
        case .snapshot(let version):
            let bytes = try required(reply, role: "snapshot", path: snapshotPath(version))
            try acceptSnapshot(bytes, version: version)
            return try nextTargets()
        case .targets(let version):
            let bytes = try required(reply, role: "targets", path: metadataPath("targets", version))
            try acceptTargets(bytes, version: version)
            return try nextDelegated()
        case .delegated(let name, let version):
            let bytes = try required(reply, role: name, path: metadataPath(name, version))
            try acceptDelegated(bytes, name: name, version: version)
            return try nextDelegated()
        case .done:
            throw TUFError(.malformed, role: "refresh", "a reply after the refresh ended")
        }
    }

    private var currentRole: String {
        switch phase {
        case .root: "root"
        case .timestamp: "timestamp"
        case .snapshot: "snapshot"
        case .targets: "targets"
        case .delegated(let name, _): name
        case .done: "refresh"
        }
    }

    private func required(_ reply: Reply, role: String, path: String) throws(TUFError) -> [UInt8] {
        switch reply {
        case .data(let bytes): return bytes
        case .notFound, .notModified: throw TUFError(.notFound, role: role, "the repository does not serve \(path)")
        case .failed(let reason): throw TUFError(.transport, role: role, reason)
        case .tooLong: throw TUFError(.length, role: role, "\(path) is longer than promised")
        }
    }

    // MARK: Root (§5.3)

    private mutating func receiveRoot(_ reply: Reply, next: Int, rotations: Int) throws(TUFError) -> Step {
        if case .data(let bytes) = reply {
            guard bytes.count <= Limits.root else {
                throw TUFError(.length, role: "root", "\(next).root.json is over \(Limits.root) bytes")
            }
            let root = try TUFRoot(bytes)
            try set.root.verify("root", root.envelope)
            try root.verify("root", root.envelope)
            guard root.version == next else {
                throw TUFError(.versionMismatch, role: "root", "\(next).root.json holds version \(root.version)")
            }
            set.root = root
            changed = true
            guard rotations + 1 < Limits.maximumRootRotations else { return try rootChainEnded(rotated: true) }
            phase = .root(next: next + 1, rotations: rotations + 1)
            return .fetch(Fetch(path: "\(next + 1).root.json", maximumLength: Limits.root, conditional: false))
        }
        return try rootChainEnded(rotated: rotations > 0)
    }

    private mutating func rootChainEnded(rotated: Bool) throws(TUFError) -> Step {
        guard !set.root.envelope.isExpired(at: now) else {
            throw TUFError(
                .expired, role: "root", "root v\(set.root.version) expired \(TUFDate.format(set.root.envelope.expires))"
            )
        }
        if rotated {
            // §5.3.11: metadata no longer signed by the new root's keys is no longer a reference.
            var reloaded = set
            reloaded.timestamp = nil
            reloaded.snapshot = nil
            reloaded.targets = [:]
            reloaded.signers = [:]
            reloaded.load(persisted: set.files, verifiedAt: set.verifiedAt)
            set = reloaded
        }
        phase = .timestamp
        return .fetch(Fetch(path: "timestamp.json", maximumLength: Limits.timestamp, conditional: set.timestamp != nil))
    }

    // MARK: Timestamp (§5.4)

    private mutating func receiveTimestamp(_ reply: Reply) throws(TUFError) -> Step {
        let timestamp: TUFTimestamp
        switch reply {
        case .notModified:
            guard let trusted = set.timestamp else {
                throw TUFError(.notFound, role: "timestamp", "304 with no timestamp held")
            }
            timestamp = trusted
        default:
            let bytes = try required(reply, role: "timestamp", path: "timestamp.json")
            guard bytes.count <= Limits.timestamp else {
                throw TUFError(.length, role: "timestamp", "timestamp.json is over \(Limits.timestamp) bytes")
            }
            timestamp = try TUFTimestamp(bytes)
            try set.root.verify("timestamp", timestamp.envelope)
        }
        if let trusted = set.timestamp {
            guard timestamp.version >= trusted.version else {
                throw TUFError(
                    .rollback, role: "timestamp", "version \(timestamp.version) served, \(trusted.version) trusted")
            }
            guard timestamp.snapshot.version >= trusted.snapshot.version else {
                throw TUFError(
                    .rollback, role: "snapshot",
                    "timestamp v\(timestamp.version) names snapshot v\(timestamp.snapshot.version), v\(trusted.snapshot.version) trusted"
                )
            }
        }
        guard !timestamp.envelope.isExpired(at: now) else {
            throw TUFError(
                .expired, role: "timestamp",
                "timestamp v\(timestamp.version) expired \(TUFDate.format(timestamp.envelope.expires))")
        }
        if timestamp.version != set.timestamp?.version { changed = true }
        set.timestamp = timestamp
        if let snapshot = set.snapshot, snapshot.version == timestamp.snapshot.version {
            try checkExpiry(snapshot.envelope, role: "snapshot")
            return try nextTargets()
        }
        let version = timestamp.snapshot.version
        phase = .snapshot(version: version)
        return .fetch(
            Fetch(
                path: snapshotPath(version), maximumLength: timestamp.snapshot.length ?? Limits.snapshot,
                conditional: false))
    }

    // MARK: Snapshot (§5.5)

    private mutating func acceptSnapshot(_ bytes: [UInt8], version: Int) throws(TUFError) {
        guard let promised = set.timestamp?.snapshot else {
            throw TUFError(.malformed, role: "snapshot", "no timestamp")
        }
        guard bytes.count <= (promised.length ?? Limits.snapshot) else {
            throw TUFError(
                .length, role: "snapshot", "\(bytes.count) bytes served, at most \(promised.length ?? Limits.snapshot)")
        }
        try promised.verify(bytes, role: "snapshot")
        let snapshot = try TUFSnapshot(bytes)
        try set.root.verify("snapshot", snapshot.envelope)
        if let trusted = set.snapshot {
            for (name, file) in trusted.meta.sorted(by: { $0.key < $1.key }) {
                guard let offered = snapshot.meta[name] else {
                    throw TUFError(.rollback, role: "snapshot", "snapshot v\(snapshot.version) drops \(name)")
                }
                guard offered.version >= file.version else {
                    throw TUFError(
                        .rollback, role: "snapshot", "\(name) v\(offered.version) named, v\(file.version) trusted")
                }
            }
        }
        guard snapshot.version == version else {
            throw TUFError(
                .versionMismatch, role: "snapshot", "timestamp names v\(version), the file holds v\(snapshot.version)")
        }
        try checkExpiry(snapshot.envelope, role: "snapshot")
        set.snapshot = snapshot
        changed = true
    }

    // MARK: Targets (§5.6)

    private mutating func nextTargets() throws(TUFError) -> Step {
        guard let meta = set.snapshot?.meta["targets.json"] else {
            throw TUFError(.notFound, role: "targets", "the snapshot does not name targets.json")
        }
        if let trusted = set.targets["targets"], trusted.version == meta.version {
            try checkExpiry(trusted.envelope, role: "targets")
            queueDelegations(of: trusted, depth: 0)
            return try nextDelegated()
        }
        phase = .targets(version: meta.version)
        return .fetch(
            Fetch(
                path: metadataPath("targets", meta.version), maximumLength: meta.length ?? Limits.targets,
                conditional: false))
    }

    private mutating func acceptTargets(_ bytes: [UInt8], version: Int) throws(TUFError) {
        let targets = try verifiedTargets(bytes, name: "targets", version: version) { envelope throws(TUFError) in
            try set.root.verify("targets", envelope)
        }
        pending.removeAll()
        // A new top-level targets may delegate differently: delegated roles are verified again under it.
        previousDelegated = set.targets.filter { $0.key != "targets" }
        set.targets = ["targets": targets.metadata]
        set.signers = ["targets": targets.signers]
        queueDelegations(of: targets.metadata, depth: 0)
    }

    private mutating func queueDelegations(of role: TUFTargets, depth: Int) {
        guard depth < Limits.maximumDelegationDepth else { return }
        for delegated in role.delegations { pending.append((delegated, role.role, depth + 1)) }
    }

    private mutating func nextDelegated() throws(TUFError) -> Step {
        while !pending.isEmpty {
            let (role, delegator, depth) = pending.removeFirst()
            loadedRoles += 1
            guard loadedRoles <= Limits.maximumDelegatedRoles else {
                throw TUFError(.malformed, role: role.name, "more than \(Limits.maximumDelegatedRoles) delegated roles")
            }
            guard let meta = set.snapshot?.meta["\(role.name).json"] else {
                throw TUFError(.notFound, role: role.name, "the snapshot does not name \(role.name).json")
            }
            if let trusted = set.targets[role.name] ?? previousDelegated[role.name], trusted.version == meta.version,
                let delegatorMetadata = set.targets[delegator],
                let count = try? delegatorMetadata.verify(role, trusted.envelope)
            {
                try checkExpiry(trusted.envelope, role: role.name)
                set.targets[role.name] = trusted
                set.signers[role.name] = count
                queueDelegations(of: trusted, depth: depth)
                continue
            }
            set.targets[role.name] = nil
            pendingDelegator = (role, delegator, depth)
            phase = .delegated(name: role.name, version: meta.version)
            return .fetch(
                Fetch(
                    path: metadataPath(role.name, meta.version), maximumLength: meta.length ?? Limits.targets,
                    conditional: false))
        }
        return finish()
    }

    private var pendingDelegator: (role: TUFDelegatedRole, delegator: String, depth: Int)?

    private mutating func acceptDelegated(_ bytes: [UInt8], name: String, version: Int) throws(TUFError) {
        guard let (role, delegatorName, depth) = pendingDelegator, let delegator = set.targets[delegatorName] else {
            throw TUFError(.malformed, role: name, "no delegator")
        }
        let targets = try verifiedTargets(bytes, name: name, version: version) { envelope throws(TUFError) in
            try delegator.verify(role, envelope)
        }
        set.targets[name] = targets.metadata
        set.signers[name] = targets.signers
        changed = true
        queueDelegations(of: targets.metadata, depth: depth)
    }

    private func verifiedTargets(
        _ bytes: [UInt8], name: String, version: Int, signedBy verify: (TUFEnvelope) throws(TUFError) -> Int
    ) throws(TUFError) -> (metadata: TUFTargets, signers: Int) {
        guard let promised = set.snapshot?.meta["\(name).json"] else {
            throw TUFError(.notFound, role: name, "the snapshot does not name \(name).json")
        }
        guard bytes.count <= (promised.length ?? Limits.targets) else {
            throw TUFError(
                .length, role: name, "\(bytes.count) bytes served, at most \(promised.length ?? Limits.targets)")
        }
        try promised.verify(bytes, role: name)
        let targets = try TUFTargets(bytes, role: name)
        let signers = try verify(targets.envelope)
        guard targets.version == version else {
            throw TUFError(
                .versionMismatch, role: name, "the snapshot names v\(version), the file holds v\(targets.version)")
        }
        try checkExpiry(targets.envelope, role: name)
        return (targets, signers)
    }

    // MARK: End

    private mutating func finish() -> Step {
        phase = .done
        set.verifiedAt = now
        return .finished(changed ? .updated(set) : .unchanged(set))
    }

    private func checkExpiry(_ envelope: TUFEnvelope, role: String) throws(TUFError) {
        guard !envelope.isExpired(at: now) else {
            throw TUFError(
                .expired, role: role, "\(role) v\(envelope.version) expired \(TUFDate.format(envelope.expires))")
        }
    }

    private func snapshotPath(_ version: Int) -> String { metadataPath("snapshot", version) }

    private func metadataPath(_ role: String, _ version: Int) -> String {
        set.root.consistentSnapshot ? "\(version).\(role).json" : "\(role).json"
    }
}
