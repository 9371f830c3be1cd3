import CordonProtocol
import Crypto
import Foundation

/// Makes TUF metadata the way python-tuf does (spec 1.0, Ed25519, canonical JSON signatures): what
/// `cordon fleet` publishes. Each function returns the `signed` object; `sign` wraps it.
public enum TUFWriter {
    static let specVersion = "1.0.31"

    /// The `signed` object of a root.
    public static func root(
        version: Int, expires: Date, keys: [TUFKey], roles: [String: TUFRoleKeys], wipeThreshold: Int
    ) -> JSONValue {
        var keyMembers: [String: JSONValue] = [:]
        for key in keys { keyMembers[key.id] = key.json }
        var roleMembers: [String: JSONValue] = [:]
        for (name, role) in roles {
            roleMembers[name] = .object([
                "keyids": .array(role.keyIDs.map(JSONValue.string)), "threshold": .int(role.threshold),
            ])
        }
        return .object([
            "_type": .string("root"), "spec_version": .string(specVersion), "version": .int(version),
            "expires": .string(TUFDate.format(expires)), "consistent_snapshot": .bool(true),
            "keys": .object(keyMembers), "roles": .object(roleMembers),
            "x-cordon": .object(["wipeThreshold": .int(wipeThreshold)]),
        ])
    }

    /// The `signed` object of a timestamp naming `snapshot` (its version, length and sha256).
    public static func timestamp(version: Int, expires: Date, snapshot: [UInt8], snapshotVersion: Int) -> JSONValue {
        .object([
            "_type": .string("timestamp"), "spec_version": .string(specVersion), "version": .int(version),
            "expires": .string(TUFDate.format(expires)),
            "meta": .object(["snapshot.json": metaFile(version: snapshotVersion, bytes: snapshot)]),
        ])
    }

    /// The `signed` object of a snapshot naming each targets role's file, by role name.
    public static func snapshot(version: Int, expires: Date, roles: [String: (version: Int, bytes: [UInt8])])
        -> JSONValue
    {
        var meta: [String: JSONValue] = [:]
        for (name, role) in roles { meta["\(name).json"] = metaFile(version: role.version, bytes: role.bytes) }
        return .object([
            "_type": .string("snapshot"), "spec_version": .string(specVersion), "version": .int(version),
            "expires": .string(TUFDate.format(expires)), "meta": .object(meta),
        ])
    }

    /// A delegation of `paths` to a role.
    public struct Delegation: Sendable {
        public var name: String
        public var keys: [TUFKey]
        public var threshold: Int
        public var paths: [String]

        public init(name: String, keys: [TUFKey], threshold: Int, paths: [String]) {
            self.name = name
            self.keys = keys
            self.threshold = threshold
            self.paths = paths
        }
    }

    /// The `signed` object of a targets role listing `files` (path → bytes), delegating `delegations`.
    public static func targets(
        version: Int, expires: Date, files: [String: [UInt8]], delegations: [Delegation] = []
    ) -> JSONValue {
        var targets: [String: JSONValue] = [:]
        for (path, bytes) in files {
            targets[path] = .object([
                "length": .int(bytes.count),
                "hashes": .object(["sha256": .string(TUFHex.encode(SHA256.hash(data: bytes)))]),
            ])
        }
        var members: [String: JSONValue] = [
            "_type": .string("targets"), "spec_version": .string(specVersion), "version": .int(version),
            "expires": .string(TUFDate.format(expires)), "targets": .object(targets),
        ]
        if !delegations.isEmpty {
            var keys: [String: JSONValue] = [:]
            for delegation in delegations { for key in delegation.keys { keys[key.id] = key.json } }
            members["delegations"] = .object([
                "keys": .object(keys),
                "roles": .array(
                    delegations.map {
                        .object([
                            "name": .string($0.name), "keyids": .array($0.keys.map { .string($0.id) }),
                            "threshold": .int($0.threshold), "terminating": .bool(true),
                            "paths": .array($0.paths.map(JSONValue.string)),
                        ])
                    }),
            ])
        }
        return .object(members)
    }

    /// The metadata file: `signed` with one signature per key, as indented JSON like python-tuf writes.
    public static func sign(_ signed: JSONValue, with keys: [TUFSigningKey]) throws(TUFError) -> [UInt8] {
        let message = try CanonicalJSON.encode(signed, role: "metadata")
        var signatures: [JSONValue] = []
        for key in keys {
            signatures.append(
                .object(["keyid": .string(key.publicKey.id), "sig": .string(TUFHex.encode(try key.sign(message)))]))
        }
        let document = JSONValue.object(["signed": signed, "signatures": .array(signatures)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(document) else {
            throw TUFError(.malformed, role: "metadata", "not encodable")
        }
        return Array(data) + [UInt8(ascii: "\n")]
    }

    /// A file's entry in timestamp or snapshot meta: version, length and sha256.
    static func metaFile(version: Int, bytes: [UInt8]) -> JSONValue {
        .object([
            "version": .int(version), "length": .int(bytes.count),
            "hashes": .object(["sha256": .string(TUFHex.encode(SHA256.hash(data: bytes)))]),
        ])
    }
}
