import Crypto
import Foundation

/// The device key that signs posture reports (docs/PROTOCOL.md, "Signed posture reports"): Ed25519,
/// made by the agent on first use and kept sealed in the container; its public key is given out as
/// `cordon-posture-public-key-v1 <base64 32 bytes>` (or the bare base64), its id is the first 8
/// bytes of SHA-256 of the public key, in hex.
public enum DeviceKeySigning {
    static let publicTag = "cordon-posture-public-key-v1"
    /// The format name of a report, also the first bytes of every signed message.
    static let reportFormat = "cordon.posture.report.v1"

    /// A new key pair: the 32-byte private seed (the caller seals and zeroes it) and the public key.
    public static func generate() -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let key = Curve25519.Signing.PrivateKey()
        return (Array(key.rawRepresentation), Array(key.publicKey.rawRepresentation))
    }

    /// Signs `message` with the 32-byte private seed.
    public static func sign(_ message: [UInt8], privateKey: UnsafeRawBufferPointer) throws(DeviceKeyError) -> [UInt8] {
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: privateKey) else {
            throw .malformed("the device key is not a 32-byte Ed25519 seed")
        }
        guard let signature = try? key.signature(for: message) else { throw .malformed("signing failed") }
        return Array(signature)
    }

    /// The public key of a 32-byte private seed.
    public static func publicKey(of privateKey: UnsafeRawBufferPointer) throws(DeviceKeyError) -> [UInt8] {
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: privateKey) else {
            throw .malformed("the device key is not a 32-byte Ed25519 seed")
        }
        return Array(key.publicKey.rawRepresentation)
    }

    /// The key's id: the first 8 bytes of SHA-256 of the public key, in hex.
    public static func keyId(of publicKey: [UInt8]) -> String {
        SHA256.hash(data: publicKey).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The public key file's line.
    public static func publicKeyText(_ publicKey: [UInt8]) -> String {
        "\(publicTag) \(Data(publicKey).base64EncodedString())"
    }

    /// The 32-byte public key in `text`: a `cordon-posture-public-key-v1 <base64>` line or bare base64.
    public static func parsePublicKey(_ text: String) throws(DeviceKeyError) -> [UInt8] {
        let parts = text.split(whereSeparator: \.isWhitespace)
        let encoded: Substring
        switch parts.count {
        case 1: encoded = parts[0]
        case 2 where parts[0] == publicTag: encoded = parts[1]
        default: throw .malformed("expected \"\(publicTag) <base64>\" or the bare base64 key")
        }
        guard let raw = Data(base64Encoded: String(encoded)), raw.count == 32 else {
            throw .malformed("the public key is not 32 bytes of base64")
        }
        return Array(raw)
    }

    /// Checks a report file (`cordon posture report`'s JSON: `format`, `payload`, `signature`)
    /// against `publicKey` and returns the payload bytes it signs. Never trusts the report's own
    /// `publicKey`.
    public static func verifyReport(_ report: Data, publicKey: [UInt8]) throws(DeviceKeyError) -> Data {
        guard let object = (try? JSONSerialization.jsonObject(with: report)) as? [String: Any] else {
            throw .malformed("the report is not a JSON object")
        }
        guard object["format"] as? String == reportFormat else {
            throw .malformed("the report's format is not \(reportFormat)")
        }
        guard let payloadText = object["payload"] as? String, let payload = Data(base64Encoded: payloadText) else {
            throw .malformed("the report's payload is not base64")
        }
        guard let signatureText = object["signature"] as? String, let signature = Data(base64Encoded: signatureText),
            signature.count == 64
        else { throw .malformed("the report's signature is not 64 bytes of base64") }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else {
            throw .malformed("the public key is not an Ed25519 key")
        }
        let message = Data(reportFormat.utf8) + Data([0]) + payload
        guard key.isValidSignature(signature, for: message) else {
            throw .badSignature(keyId: keyId(of: publicKey))
        }
        return payload
    }
}

/// Why a device key, public key or posture report was not accepted.
public enum DeviceKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is not in the expected form (says what was expected).
    case malformed(String)
    /// The signature does not verify under the key with this id.
    case badSignature(keyId: String)

    public var description: String {
        switch self {
        case .malformed(let what): return what
        case .badSignature(let keyId): return "the signature does not verify under the device key \(keyId)"
        }
    }
}
