import CordonProtocol
import Crypto

/// A file the targets role (or a delegated role) vouches for: its exact length and hashes.
public struct TUFTargetFile: Sendable, Hashable {
    /// The target path, `policies/10-base.json`.
    public var path: String
    public var length: Int
    public var hashes: [String: [UInt8]]
    /// The role that listed it.
    public var role: String

    init(path: String, role: String, _ fields: TUFFields) throws(TUFError) {
        self.path = path
        self.role = role
        length = try fields.integer("length")
        guard length >= 0 else { throw TUFError(.malformed, role: role, "\(fields.path("length")) is negative") }
        hashes = try TUFHashes.parse(fields.object("hashes"))
        guard !hashes.isEmpty else { throw TUFError(.malformed, role: role, "\(fields.path("hashes")) is empty") }
    }

    /// Throws `length` or `hash` unless `bytes` are exactly this file.
    public func verify(_ bytes: [UInt8]) throws(TUFError) {
        guard bytes.count == length else {
            throw TUFError(.length, role: "target", "\(path): \(bytes.count) bytes served, \(length) promised")
        }
        do {
            try TUFHashes.verify(hashes, bytes, role: "target")
        } catch {
            throw TUFError(.hash, role: "target", "\(path): \(error.detail)")
        }
    }

    /// Where a consistent-snapshot repository serves it: `targets/<dir>/<sha256>.<name>`.
    public var servedPath: String {
        let digest = TUFHex.encode(hashes["sha256"] ?? hashes["sha512"] ?? [])
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let name = parts.last.map(String.init) ?? path
        let directory = parts.dropLast().joined(separator: "/")
        return "targets/" + (directory.isEmpty ? "" : directory + "/") + "\(digest).\(name)"
    }
}

/// A role the targets role hands part of the namespace to.
public struct TUFDelegatedRole: Sendable, Hashable {
    public var name: String
    public var keys: TUFRoleKeys
    public var terminating: Bool
    /// Shell-style patterns, one `*` per path component at most matching within that component.
    public var paths: [String]?
    /// Hex prefixes of the SHA-256 of the target path.
    public var pathHashPrefixes: [String]?

    init(_ fields: TUFFields) throws(TUFError) {
        name = try fields.string("name")
        guard !name.isEmpty, !name.contains("/"), !TUFRoot.topLevelRoles.contains(name) else {
            throw TUFError(
                .malformed, role: fields.role, "\(fields.path("name")) \"\(name)\" is not a delegated role name")
        }
        keys = try TUFRoleKeys(fields)
        terminating = try fields.bool("terminating")
        paths = fields.value["paths"] == nil ? nil : try fields.strings("paths")
        pathHashPrefixes = fields.value["path_hash_prefixes"] == nil ? nil : try fields.strings("path_hash_prefixes")
        guard (paths == nil) != (pathHashPrefixes == nil) else {
            throw TUFError(
                .malformed, role: fields.role, "\(fields.pointer) needs exactly one of paths and path_hash_prefixes")
        }
    }

    /// Whether the role is trusted for `target`.
    public func covers(_ target: String) -> Bool {
        if let pathHashPrefixes {
            let digest = TUFHex.encode(SHA256.hash(data: Array(target.utf8)))
            return pathHashPrefixes.contains { digest.hasPrefix($0) }
        }
        return (paths ?? []).contains { Self.matches(pattern: $0, target) }
    }

    /// python-tuf's rule: as many components as the pattern, each matched by `fnmatch`.
    static func matches(pattern: String, _ target: String) -> Bool {
        let patternParts = pattern.split(separator: "/", omittingEmptySubsequences: false)
        let targetParts = target.split(separator: "/", omittingEmptySubsequences: false)
        guard patternParts.count == targetParts.count else { return false }
        return zip(patternParts, targetParts).allSatisfy { glob(Array($0.0.utf8)[...], Array($0.1.utf8)[...]) }
    }

    private static func glob(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case UInt8(ascii: "*"):
            var rest = text
            while true {
                if glob(pattern.dropFirst(), rest) { return true }
                guard !rest.isEmpty else { return false }
                rest = rest.dropFirst()
            }
        case UInt8(ascii: "?"):
            return !text.isEmpty && glob(pattern.dropFirst(), text.dropFirst())
        default:
            return text.first == first && glob(pattern.dropFirst(), text.dropFirst())
        }
    }
}

/// A targets role's metadata (top-level or delegated): its files and its delegations.
public struct TUFTargets: Sendable {
    public let envelope: TUFEnvelope
    /// The role's name.
    public let role: String
    /// By target path.
    public let targets: [String: TUFTargetFile]
    /// Keys of the delegated roles, by id.
    public let delegationKeys: [String: TUFKey]
    /// Delegated roles in order (the order of the search).
    public let delegations: [TUFDelegatedRole]

    public init(_ bytes: [UInt8], role: String) throws(TUFError) {
        let (envelope, signed) = try TUFEnvelope.parse(bytes, type: "targets", role: role)
        self.envelope = envelope
        self.role = role
        let fields = try signed.object("targets")
        var targets: [String: TUFTargetFile] = [:]
        for (path, value) in fields.members {
            targets[path] = try TUFTargetFile(
                path: path, role: role, TUFFields(value, at: fields.path(path), role: role))
        }
        self.targets = targets
        var keys: [String: TUFKey] = [:]
        var roles: [TUFDelegatedRole] = []
        if let delegations = try signed.optionalObject("delegations") {
            if delegations.value["succinct_roles"] != nil {
                throw TUFError(
                    .malformed, role: role,
                    "\(delegations.path("succinct_roles")): succinct hash bins are not read by this client")
            }
            let keyFields = try delegations.object("keys")
            for (id, value) in keyFields.members {
                keys[id] = try TUFKey(id: id, TUFFields(value, at: keyFields.path(id), role: role))
            }
            for (index, value) in try delegations.array("roles").enumerated() {
                roles.append(
                    try TUFDelegatedRole(TUFFields(value, at: delegations.path("roles") + "/\(index)", role: role)))
            }
        }
        delegationKeys = keys
        delegations = roles
    }

    public var version: Int { envelope.version }

    /// Throws unless a threshold of `delegated`'s keys signed `envelope`; returns the number of distinct signers.
    @discardableResult
    func verify(_ delegated: TUFDelegatedRole, _ other: TUFEnvelope) throws(TUFError) -> Int {
        try delegated.keys.verify(other, keys: delegationKeys, role: delegated.name, by: "\(role) v\(version)")
    }
}
