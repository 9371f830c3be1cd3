import CordonProtocol
import Crypto

/// A public key of the repository: Ed25519 (`keytype` and `scheme` `ed25519`, the public key in hex),
/// the one kind Cordon's admin tooling makes. Other kinds are kept by id and never verify.
public struct TUFKey: Sendable, Hashable {
    /// The key's id as the metadata names it.
    public var id: String
    /// The 32 public key bytes, or nil for a kind this client does not verify.
    public var ed25519: [UInt8]?

    /// A key from a `keys` member.
    init(id: String, _ fields: TUFFields) throws(TUFError) {
        self.id = id
        let type = try fields.string("keytype")
        let scheme = try fields.string("scheme")
        let value = try fields.object("keyval")
        if type == "ed25519", scheme == "ed25519" {
            let bytes = try value.hex("public")
            guard bytes.count == 32 else {
                throw TUFError(.malformed, role: fields.role, "\(value.path("public")) is not a 32-byte Ed25519 key")
            }
            ed25519 = bytes
        } else {
            ed25519 = nil
        }
    }

    /// An Ed25519 key with its id.
    public init(id: String, ed25519: [UInt8]) {
        self.id = id
        self.ed25519 = ed25519
    }

    /// Whether `signature` signs `message` under this key.
    func verifies(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        guard let raw = ed25519, signature.count == 64,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// The key as TUF writes it in a `keys` member.
    public var json: JSONValue {
        .object([
            "keytype": .string("ed25519"), "scheme": .string("ed25519"),
            "keyval": .object(["public": .string(TUFHex.encode(ed25519 ?? []))]),
        ])
    }

    /// The id TUF gives an Ed25519 key: SHA-256 of the key's canonical JSON, in hex.
    public static func id(ofEd25519 publicKey: [UInt8]) -> String {
        let key = TUFKey(id: "", ed25519: publicKey)
        let bytes = (try? CanonicalJSON.encode(key.json, role: "key")) ?? []
        return TUFHex.encode(SHA256.hash(data: bytes))
    }
}

/// Which keys may sign for a role, and how many distinct ones must.
public struct TUFRoleKeys: Sendable, Hashable {
    /// The ids of the role's keys.
    public var keyIDs: [String]
    /// How many distinct keys must sign.
    public var threshold: Int

    init(_ fields: TUFFields) throws(TUFError) {
        keyIDs = try fields.strings("keyids")
        threshold = try fields.integer("threshold")
        guard threshold >= 1 else {
            throw TUFError(.malformed, role: fields.role, "\(fields.path("threshold")) is \(threshold), not 1 or more")
        }
    }

    /// Keys and threshold as given.
    public init(keyIDs: [String], threshold: Int) {
        self.keyIDs = keyIDs
        self.threshold = threshold
    }

    /// How many distinct keys of this role (by public key, not id) signed `envelope`.
    func validSigners(of envelope: TUFEnvelope, keys: [String: TUFKey]) -> Int {
        var signers = Set<[UInt8]>()
        let allowed = Set(keyIDs)
        for signature in envelope.signatures where allowed.contains(signature.keyID) {
            guard let key = keys[signature.keyID], let raw = key.ed25519, !signers.contains(raw) else { continue }
            if key.verifies(signature.bytes, over: envelope.signedBytes) { signers.insert(raw) }
        }
        return signers.count
    }

    /// Throws `threshold` unless enough distinct keys of the role signed `envelope`; returns how many did.
    @discardableResult
    func verify(_ envelope: TUFEnvelope, keys: [String: TUFKey], role: String, by delegator: String) throws(TUFError)
        -> Int
    {
        let count = validSigners(of: envelope, keys: keys)
        guard count >= threshold else {
            throw TUFError(
                .threshold, role: role,
                "\(count) valid signature(s) by keys \(delegator) lists for \(role), \(threshold) needed")
        }
        return count
    }
}
