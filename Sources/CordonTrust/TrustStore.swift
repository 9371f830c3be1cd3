import Crypto
import Foundation

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

    /// Verifies `signature` (the `.sig` file text) over `document`, installed under the file
    /// name `name`, at time `now` (seconds since 1970); returns the verified signature.
    ///
    /// In order: the text parses as a v2 signature (a v1 one is refused), its key is trusted,
    /// the signature matches the header and the bytes, the signed name is `name`, and it has
    /// not expired. The serial is the caller's to compare with the highest it accepted.
    public func verify(
        _ document: Data, name: String, now: Double, signature text: String?
    ) throws(PolicySignatureError) -> PolicySignature {
        guard let text else { throw .missing }
        let signature = try PolicySignature.parse(text)
        guard let key = keys[signature.keyId] else { throw .untrustedKey(signature.keyId) }
        guard key.isValidSignature(signature.signature, for: signature.message(for: document)) else {
            throw .invalid(signature.keyId)
        }
        guard signature.name == name else { throw .wrongName(signed: signature.name, installed: name) }
        guard now < signature.expires else { throw .expired(signature.expiresText) }
        return signature
    }
}
