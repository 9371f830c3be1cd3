import Crypto
import Foundation

/// Ed25519 signing of admin policy files: detached signatures in `FILE.sig`, trusted public
/// keys in `/etc/cordon/trust/*.pub`.
///
/// Formats (text; the key files are one line each):
/// - private key: `cordon-policy-private-key-v1 <base64 32-byte seed>`
/// - public key: `cordon-policy-public-key-v1 <base64 32 bytes>`
/// - signature (v2, `PolicySignature`): the file name, serial and expiry it is valid for, the key id
///   and the signature over a header naming them followed by the file's exact bytes. The v1
///   signature (`cordon-policy-signature-v1 <key id> <base64>`, over the bytes alone) is no longer
///   accepted: it could be renamed, rolled back and never expired.
///
/// The key id is the first 8 bytes of SHA-256 of the public key, in hex.
public enum PolicySigning {
    static let privateTag = "cordon-policy-private-key-v1"
    static let publicTag = "cordon-policy-public-key-v1"
    /// The default validity of a signature: one year (365 days).
    public static let defaultValiditySeconds: Double = 365 * 86400

    /// A new key pair as (private key file text, public key file text, key id).
    public static func generateKeyPair() -> (privateKey: String, publicKey: String, keyId: String) {
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = key.publicKey.rawRepresentation
        return (
            "\(privateTag) \(key.rawRepresentation.base64EncodedString())\n",
            "\(publicTag) \(publicKey.base64EncodedString())\n", keyId(of: publicKey)
        )
    }

    /// Signs `document` for the file `name` with `serial` and expiry `expires` (seconds since
    /// 1970, rounded down to whole seconds) with the private key file text; returns the
    /// signature (its `text` is the `.sig` file).
    public static func sign(
        _ document: Data, name: String, serial: Int, expires: Double, privateKey text: String
    ) throws(PolicySignatureError) -> PolicySignature {
        let raw = try field(text, tag: privateTag, what: "private key")
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            throw .malformed("the private key is not a 32-byte Ed25519 seed")
        }
        guard PolicySignature.isValidName(name) else { throw .malformed("\"\(name)\" is not a file name") }
        guard serial >= 0 else { throw .malformed("the serial \(serial) is negative") }
        let expires = expires.rounded(.down)
        let message = PolicySignature.message(name: name, serial: serial, expires: expires, document: document)
        guard let signature = try? key.signature(for: message) else { throw .malformed("signing failed") }
        return PolicySignature(
            name: name, serial: serial, expires: expires, keyId: keyId(of: key.publicKey.rawRepresentation),
            signature: signature)
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
