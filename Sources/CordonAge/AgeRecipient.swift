import Crypto
import Foundation

/// Something a file can be encrypted to: it wraps the 16-byte file key into stanzas.
public protocol AgeRecipient: Sendable {
    /// Stanzas that carry `fileKey` for this recipient, drawing fresh secrets from `randomness`.
    func wrap(fileKey: SymmetricKey, randomness: AgeRandomness) throws(AgeError) -> [AgeStanza]
}

/// Something that can open files: it finds the stanza addressed to it and unwraps the file key.
public protocol AgeIdentity: Sendable {
    /// The file key from the first of `stanzas` this identity opens; nil when none is addressed
    /// to it (stanzas of other types are ignored). Throws `invalidStanza` when a stanza of its
    /// own type is malformed: that is a header failure, not a mismatch.
    func unwrap(stanzas: [AgeStanza]) throws(AgeError) -> SymmetricKey?
}

/// The source of the file key, payload nonce, ephemeral secrets and salts. Injected so tests can
/// be deterministic; `.system` is the operating system's CSPRNG.
public struct AgeRandomness: Sendable {
    private let fill: @Sendable (inout [UInt8]) -> Void

    /// Randomness drawn from `fill`, which must overwrite every byte of the array it is given.
    public init(fill: @escaping @Sendable (inout [UInt8]) -> Void) {
        self.fill = fill
    }

    /// The system CSPRNG (`getrandom` on Linux, through `SystemRandomNumberGenerator`).
    public static let system = AgeRandomness { bytes in
        var generator = SystemRandomNumberGenerator()
        var index = 0
        while index < bytes.count {
            var word = generator.next()
            for _ in 0..<min(8, bytes.count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
    }

    /// `count` fresh random bytes.
    public func bytes(_ count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        fill(&output)
        return output
    }
}

/// The AEAD both native stanza types use: ChaCha20-Poly1305 with a zero nonce (each wrap key is
/// used once), the 16-byte file key as plaintext.
enum StanzaAEAD {
    static let fileKeySize = 16
    static let bodySize = 32

    static func seal(fileKey: SymmetricKey, wrapKey: SymmetricKey) -> [UInt8] {
        let plaintext = fileKey.withUnsafeBytes { Array($0) }
        let box = Invariant.seal(plaintext, key: wrapKey, nonce: Invariant.nonce([UInt8](repeating: 0, count: 12)))
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// The file key, or nil when the body does not authenticate under `wrapKey`.
    static func open(body: [UInt8], wrapKey: SymmetricKey) -> SymmetricKey? {
        precondition(body.count == bodySize)
        let nonce = Invariant.nonce([UInt8](repeating: 0, count: 12))
        guard
            let box = try? ChaChaPoly.SealedBox(
                nonce: nonce, ciphertext: body[..<fileKeySize], tag: body[fileKeySize...]),
            let plaintext = try? ChaChaPoly.open(box, using: wrapKey)
        else { return nil }
        return SymmetricKey(data: plaintext)
    }
}

/// Crypto calls that cannot fail for the sizes this module passes (a 12-byte nonce, a 32-byte
/// key); a failure is a bug, not bad input.
enum Invariant {
    static func nonce(_ bytes: [UInt8]) -> ChaChaPoly.Nonce {
        do { return try ChaChaPoly.Nonce(data: bytes) } catch { preconditionFailure("a 12-byte nonce: \(error)") }
    }

    static func seal(_ plaintext: some DataProtocol, key: SymmetricKey, nonce: ChaChaPoly.Nonce) -> ChaChaPoly.SealedBox
    {
        do { return try ChaChaPoly.seal(plaintext, using: key, nonce: nonce) } catch {
            preconditionFailure("ChaCha20-Poly1305 with a 32-byte key: \(error)")
        }
    }

    static func privateKey(_ bytes: some ContiguousBytes) -> Curve25519.KeyAgreement.PrivateKey {
        do { return try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) } catch {
            preconditionFailure("a 32-byte X25519 private key: \(error)")
        }
    }
}
