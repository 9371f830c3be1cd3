import CordonFleet
import Foundation

/// What a key operation (rotate, add-key, threshold, renew-root) did.
public struct FleetKeyResult: Sendable {
    /// Key files written (new keys), with their role.
    public var written: [(role: FleetRole, path: String)]
    /// Key files removed from `keys/` (replaced online keys).
    public var removed: [String]
    /// The versions after the operation.
    public var versions: [FleetRole: Int]
}

extension FleetWorkspace {
    /// Replaces every key of `role` by a new one (as many as it had, the threshold kept). A top-level
    /// role's new keys go into a new root version signed by the current root keys (`rootKeys`, key
    /// files) — for `root` itself by the old and the new root keys; `commands` is re-delegated by a
    /// new targets. The role is then re-signed with its new keys. New keys go to `keys/` (root keys
    /// too: move them offline), replaced online keys are deleted from it.
    public mutating func rotate(_ role: FleetRole, rootKeys: [String] = [], now: Date = Date()) throws(FleetAdminError)
        -> FleetKeyResult
    {
        try transaction { (workspace) throws(FleetAdminError) -> FleetKeyResult in
            let old = workspace.ledger.role(role).keyIDs
            var next = workspace.ledger
            var fresh: [FleetKeyFile] = []
            for _ in old {
                let file = FleetKeyFile(role: role, key: TUFSigningKey())
                fresh.append(file)
                next.keys[file.keyID] = FleetLedger.Key(
                    role: role, publicKey: TUFHex.encode(file.key.publicKey.ed25519 ?? []))
            }
            next.update(role) { $0.keyIDs = fresh.map(\.keyID) }
            for id in old where !Self.usedElsewhere(id, next) { next.keys[id] = nil }
            var release = FleetRelease()
            switch role {
            case .root: release.root = true
            case .timestamp: release.root = true
            case .snapshot: release.root = true; release.snapshot = true
            case .targets: release.root = true; release.targets = true
            case .commands: release.targets = true; release.commands = true
            }
            if release.root {
                release.rootSigners = try workspace.rootSigners(
                    rootKeys, next: next, extra: role == .root ? fresh.map(\.key) : [])
            }
            // Every other key the release needs is there before a new key is written.
            try workspace.checkOnlineKeys(for: release, except: role)
            var written: [(FleetRole, String)] = []
            for file in fresh {
                let path = "\(workspace.keysDirectory)/\(file.fileName)"
                try file.write(to: path)
                written.append((role, path))
            }
            workspace.ledger = next
            if role == .commands { release.commandSigners = fresh.map(\.key) }
            try workspace.commit(release, now: now)
            var removed: [String] = []
            if role != .root {
                for id in old {
                    let path = workspace.keyPath(role, id)
                    guard FleetFiles.exists(path) else { continue }
                    try FleetFiles.remove(path)
                    try FleetFiles.remove(String(path.dropLast(4)) + ".pub")
                    removed.append(path)
                }
            }
            return FleetKeyResult(written: written, removed: removed, versions: workspace.versions)
        }
    }

    /// Adds a new key to `role` (written to `out`, else `keys/`), the threshold kept.
    public mutating func addKey(_ role: FleetRole, out: String? = nil, rootKeys: [String] = [], now: Date = Date())
        throws(FleetAdminError) -> FleetKeyResult
    {
        try transaction { (workspace) throws(FleetAdminError) -> FleetKeyResult in
            let file = FleetKeyFile(role: role, key: TUFSigningKey())
            var next = workspace.ledger
            next.keys[file.keyID] = FleetLedger.Key(
                role: role, publicKey: TUFHex.encode(file.key.publicKey.ed25519 ?? []))
            next.update(role) { $0.keyIDs.append(file.keyID) }
            var release = FleetRelease()
            if role == .commands {
                release.targets = true
            } else {
                release.root = true
                release.rootSigners = try workspace.rootSigners(
                    rootKeys, next: next, extra: role == .root ? [file.key] : [])
            }
            try workspace.checkOnlineKeys(for: release, except: nil)
            let path = out ?? "\(workspace.keysDirectory)/\(file.fileName)"
            try file.write(to: path)
            workspace.ledger = next
            try workspace.commit(release, now: now)
            return FleetKeyResult(written: [(role, path)], removed: [], versions: workspace.versions)
        }
    }

    /// Sets how many keys of `role` must sign. A top-level role's threshold is in a new root
    /// (`rootKeys`); `commands`' in a new targets. The role is re-signed under the new threshold
    /// (with the keys in `keys/`, and `commandKeys` for `commands`).
    public mutating func setThreshold(
        _ role: FleetRole, _ threshold: Int, rootKeys: [String] = [], commandKeys: [String] = [], now: Date = Date()
    ) throws(FleetAdminError) -> FleetKeyResult {
        try transaction { (workspace) throws(FleetAdminError) -> FleetKeyResult in
            let keys = workspace.ledger.role(role).keyIDs.count
            guard (1...max(keys, 1)).contains(threshold) else {
                throw FleetAdminError(
                    .usage, "threshold \(threshold) for \(role.rawValue), which has \(keys) key(s)",
                    hint: "between 1 and \(keys); add keys first with `cordon fleet add-key`")
            }
            var next = workspace.ledger
            next.update(role) { $0.threshold = threshold }
            var release = FleetRelease()
            switch role {
            case .root, .timestamp: break
            case .snapshot: release.snapshot = true
            case .targets: release.targets = true
            case .commands:
                release.targets = true
                release.commands = true
            }
            if role == .commands {
                var signers: [String: TUFSigningKey] = [:]
                for path in commandKeys {
                    let file = try workspace.checked(
                        FleetKeyFile.read(path), role: .commands, path: path, option: "--command-key")
                    signers[file.keyID] = file.key
                }
                for id in next.role(.commands).keyIDs where signers[id] == nil {
                    let path = workspace.keyPath(.commands, id)
                    if FleetFiles.exists(path) { signers[id] = try FleetKeyFile.read(path).key }
                }
                guard signers.count >= threshold else {
                    throw FleetAdminError(
                        .threshold, "the commands role would need \(threshold) keys; \(signers.count) given",
                        hint: "give --command-key FILE for the other admins' command keys")
                }
                release.commandSigners = signers.keys.sorted().compactMap { signers[$0] }
            } else {
                release.root = true
                release.rootSigners = try workspace.rootSigners(rootKeys, next: next, extra: [])
            }
            workspace.ledger = next
            try workspace.commit(release, now: now)
            return FleetKeyResult(written: [], removed: [], versions: workspace.versions)
        }
    }

    /// Sets the root's wipe threshold (a new root, `rootKeys`).
    public mutating func setWipeThreshold(_ threshold: Int, rootKeys: [String], now: Date = Date())
        throws(FleetAdminError) -> FleetKeyResult
    {
        guard threshold >= 1 else {
            throw FleetAdminError(.usage, "wipe threshold \(threshold) is not 1 or more", hint: "e.g. 2")
        }
        return try transaction { (workspace) throws(FleetAdminError) -> FleetKeyResult in
            var next = workspace.ledger
            next.wipeThreshold = threshold
            let signers = try workspace.rootSigners(rootKeys, next: next, extra: [])
            workspace.ledger = next
            try workspace.commit(FleetRelease(root: true, rootSigners: signers), now: now)
            return FleetKeyResult(written: [], removed: [], versions: workspace.versions)
        }
    }

    /// Signs the same root again as a new version with a new expiry (`rootKeys`).
    public mutating func renewRoot(rootKeys: [String], now: Date = Date()) throws(FleetAdminError) -> FleetKeyResult {
        try transaction { (workspace) throws(FleetAdminError) -> FleetKeyResult in
            let signers = try workspace.rootSigners(rootKeys, next: workspace.ledger, extra: [])
            try workspace.commit(FleetRelease(root: true, rootSigners: signers), now: now)
            return FleetKeyResult(written: [], removed: [], versions: workspace.versions)
        }
    }

    /// Every role's current version.
    public var versions: [FleetRole: Int] {
        var out: [FleetRole: Int] = [:]
        for role in FleetRole.allCases { out[role] = ledger.role(role).version }
        return out
    }

    /// Throws unless `keys/` holds enough keys of each online role `release` signs (but `except`).
    func checkOnlineKeys(for release: FleetRelease, except: FleetRole?) throws(FleetAdminError) {
        var roles: [FleetRole] = [.timestamp]
        if release.snapshot || release.targets || release.commands { roles.append(.snapshot) }
        if release.targets { roles.append(.targets) }
        if release.commands, release.commandSigners == nil { roles.append(.commands) }
        for role in roles where role != except { _ = try onlineKeys(role) }
    }

    static func usedElsewhere(_ id: String, _ ledger: FleetLedger) -> Bool {
        FleetRole.allCases.contains { ledger.role($0).keyIDs.contains(id) }
    }
}
