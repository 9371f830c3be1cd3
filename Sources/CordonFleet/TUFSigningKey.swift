import Crypto
import Foundation

/// An admin's Ed25519 key that signs a role's metadata (kept offline for root: docs/FLEET.md).
public struct TUFSigningKey: Sendable {
    private let key: Curve25519.Signing.PrivateKey

    /// A new random key.
    public init() { key = Curve25519.Signing.PrivateKey() }

    /// The key of a 32-byte seed.
    public init(seed: [UInt8]) throws(TUFError) {
        guard seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw TUFError(.malformed, role: "key", "not a 32-byte Ed25519 seed")
        }
        self.key = key
    }

    /// The 32-byte seed (to write to the admin's key file).
    public var seed: [UInt8] { Array(key.rawRepresentation) }

    /// The public half, with its TUF key id.
    public var publicKey: TUFKey {
        let raw = Array(key.publicKey.rawRepresentation)
        return TUFKey(id: TUFKey.id(ofEd25519: raw), ed25519: raw)
    }

    /// The signature over `message`.
    public func sign(_ message: [UInt8]) throws(TUFError) -> [UInt8] {
        guard let signature = try? key.signature(for: message) else {
            throw TUFError(.malformed, role: "key", "signing failed")
        }
        return Array(signature)
    }
}
