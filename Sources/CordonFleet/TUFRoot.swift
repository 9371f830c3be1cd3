import CordonProtocol
import Foundation

/// The root role's metadata: the keys and thresholds of the four top-level roles, and Cordon's
/// settings under `x-cordon` (signed with the rest).
public struct TUFRoot: Sendable {
    /// The file as served and parsed.
    public let envelope: TUFEnvelope
    /// Every key, by id.
    public let keys: [String: TUFKey]
    /// `root`, `timestamp`, `snapshot`, `targets`.
    public let roles: [String: TUFRoleKeys]
    /// Whether files are named by version and hash.
    public let consistentSnapshot: Bool
    /// How many command keys must sign a wipe of more than one device (`x-cordon.wipeThreshold`, default 2).
    public let wipeThreshold: Int

    /// The top-level role names.
    public static let topLevelRoles = ["root", "timestamp", "snapshot", "targets"]

    /// Parses root metadata (signatures are checked by the trusted set).
    public init(_ bytes: [UInt8]) throws(TUFError) {
        let (envelope, signed) = try TUFEnvelope.parse(bytes, type: "root", role: "root")
        self.envelope = envelope
        var keys: [String: TUFKey] = [:]
        let keyFields = try signed.object("keys")
        for (id, value) in keyFields.members {
            keys[id] = try TUFKey(id: id, TUFFields(value, at: keyFields.path(id), role: "root"))
        }
        let roleFields = try signed.object("roles")
        var roles: [String: TUFRoleKeys] = [:]
        for name in Self.topLevelRoles {
            roles[name] = try TUFRoleKeys(roleFields.object(name))
        }
        self.keys = keys
        self.roles = roles
        consistentSnapshot = (try? signed.bool("consistent_snapshot")) ?? false
        if let cordon = try signed.optionalObject("x-cordon") {
            wipeThreshold = try cordon.optionalInteger("wipeThreshold") ?? 2
        } else {
            wipeThreshold = 2
        }
    }

    /// The version.
    public var version: Int { envelope.version }

    /// The keys and threshold of a top-level role.
    func role(_ name: String) -> TUFRoleKeys { roles[name] ?? TUFRoleKeys(keyIDs: [], threshold: 1) }

    /// Throws unless a threshold of this root's `role` keys signed `envelope`.
    @discardableResult
    func verify(_ name: String, _ other: TUFEnvelope) throws(TUFError) -> Int {
        try role(name).verify(other, keys: keys, role: name, by: "root v\(version)")
    }
}

/// What a role says of another file: its version, and optionally its length and hashes.
public struct TUFMetaFile: Sendable, Hashable {
    public var version: Int
    public var length: Int?
    public var hashes: [String: [UInt8]]

    init(_ fields: TUFFields) throws(TUFError) {
        version = try fields.version()
        length = try fields.optionalInteger("length")
        hashes = try TUFHashes.parse(fields.optionalObject("hashes"))
    }

    /// Throws `length` or `hash` unless `bytes` match what was promised.
    func verify(_ bytes: [UInt8], role: String) throws(TUFError) {
        if let length, bytes.count != length {
            throw TUFError(.length, role: role, "\(bytes.count) bytes served, \(length) promised")
        }
        try TUFHashes.verify(hashes, bytes, role: role)
    }
}

/// The timestamp role's metadata: which snapshot is current.
public struct TUFTimestamp: Sendable {
    public let envelope: TUFEnvelope
    /// What it says of `snapshot.json`.
    public let snapshot: TUFMetaFile

    public init(_ bytes: [UInt8]) throws(TUFError) {
        let (envelope, signed) = try TUFEnvelope.parse(bytes, type: "timestamp", role: "timestamp")
        self.envelope = envelope
        let meta = try signed.object("meta")
        snapshot = try TUFMetaFile(meta.object("snapshot.json"))
    }

    public var version: Int { envelope.version }
}

/// The snapshot role's metadata: the version (and optionally hash) of every targets metadata file.
public struct TUFSnapshot: Sendable {
    public let envelope: TUFEnvelope
    /// By file name (`targets.json`, `commands.json`).
    public let meta: [String: TUFMetaFile]

    public init(_ bytes: [UInt8]) throws(TUFError) {
        let (envelope, signed) = try TUFEnvelope.parse(bytes, type: "snapshot", role: "snapshot")
        self.envelope = envelope
        let fields = try signed.object("meta")
        var meta: [String: TUFMetaFile] = [:]
        for (name, value) in fields.members {
            meta[name] = try TUFMetaFile(TUFFields(value, at: fields.path(name), role: "snapshot"))
        }
        self.meta = meta
    }

    public var version: Int { envelope.version }
}
