import Crypto
import Foundation

/// Ed25519 signing of admin policy files: detached signatures in `FILE.sig`, trusted public
/// keys in `/etc/cordon/trust/*.pub`.
///
/// Formats (one line each, text):
/// - private key: `cordon-policy-private-key-v1 <base64 32-byte seed>`
/// - public key: `cordon-policy-public-key-v1 <base64 32 bytes>`
/// - signature: `cordon-policy-signature-v1 <key id> <base64 64 bytes>`, over the file's exact bytes.
///
/// The key id is the first 8 bytes of SHA-256 of the public key, in hex.
public enum PolicySigning {
    static let privateTag = "cordon-policy-private-key-v1"
    static let publicTag = "cordon-policy-public-key-v1"
    static let signatureTag = "cordon-policy-signature-v1"

    /// A new key pair as (private key file text, public key file text, key id).
    public static func generateKeyPair() -> (privateKey: String, publicKey: String, keyId: String) {
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = key.publicKey.rawRepresentation
        return (
            "\(privateTag) \(key.rawRepresentation.base64EncodedString())\n",
            "\(publicTag) \(publicKey.base64EncodedString())\n", keyId(of: publicKey)
        )
    }

    /// Signs `document` with the private key file text; returns the `.sig` file text.
    public static func sign(_ document: Data, privateKey text: String) throws(PolicySignatureError) -> String {
        let raw = try field(text, tag: privateTag, what: "private key")
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            throw .malformed("the private key is not a 32-byte Ed25519 seed")
        }
        guard let signature = try? key.signature(for: document) else { throw .malformed("signing failed") }
        return "\(signatureTag) \(keyId(of: key.publicKey.rawRepresentation)) \(signature.base64EncodedString())\n"
    }

    /// The key id of a public key file's text.
    public static func keyId(publicKey text: String) throws(PolicySignatureError) -> String {
        keyId(of: try field(text, tag: publicTag, what: "public key"))
    }

    static func keyId(of publicKey: Data) -> String {
        SHA256.hash(data: publicKey).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    static func field(_ text: String, tag: String, what: String) throws(PolicySignatureError) -> Data {
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, parts[0] == tag, let data = Data(base64Encoded: String(parts[1])) else {
            throw .malformed("expected a \(what) line \"\(tag) <base64>\"")
        }
        return data
    }
}

/// Public keys trusted to sign admin policy files.
public struct TrustStore: Sendable {
    /// Key id → Ed25519 public key.
    public private(set) var keys: [String: Curve25519.Signing.PublicKey] = [:]
    /// Key files that could not be read, with the reason.
    public private(set) var problems: [String] = []

    /// Whether any key is trusted: then every admin file must be signed.
    public var requiresSignatures: Bool { !keys.isEmpty }

    public init() {}

    /// Adds the public key in `text` (from `path`, for messages).
    public mutating func add(publicKey text: String, path: String) {
        do {
            let raw = try PolicySigning.field(text, tag: PolicySigning.publicTag, what: "public key")
            let key = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
            keys[PolicySigning.keyId(of: raw)] = key
        } catch {
            problems.append("\(path): not a Cordon public key (\(error))")
        }
    }

    /// Loads every `*.pub` in `directory` (a missing directory trusts nothing).
    public static func load(directory: String) -> TrustStore {
        var store = TrustStore()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where name.hasSuffix(".pub") {
            let path = directory + "/" + name
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                store.problems.append("\(path): unreadable")
                continue
            }
            store.add(publicKey: text, path: path)
        }
        return store
    }

    /// Verifies `signature` (the `.sig` file text) over `document`; returns the signing key id.
    public func verify(_ document: Data, signature text: String?) throws(PolicySignatureError) -> String {
        guard let text else { throw .missing }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 3, parts[0] == PolicySigning.signatureTag,
            let signature = Data(base64Encoded: String(parts[2]))
        else { throw .malformed("expected \"\(PolicySigning.signatureTag) <key id> <base64>\"") }
        let keyId = String(parts[1])
        guard let key = keys[keyId] else { throw .untrustedKey(keyId) }
        guard key.isValidSignature(signature, for: document) else { throw .invalid(keyId) }
        return keyId
    }
}

/// Why a policy signature was not accepted.
public enum PolicySignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Keys are trusted but the file has no `.sig`.
    case missing
    case malformed(String)
    /// Signed by a key that is not in the trust directory.
    case untrustedKey(String)
    /// The signature does not match the file (tampered, or signed by another key with that id).
    case invalid(String)

    public var description: String {
        switch self {
        case .missing: return "no signature (FILE.sig) although /etc/cordon/trust holds keys"
        case .malformed(let detail): return "malformed: \(detail)"
        case .untrustedKey(let id): return "signed by key \(id), which is not trusted"
        case .invalid(let id): return "the signature by key \(id) does not match the file (tampered?)"
        }
    }
}
