import Crypto

/// An age X25519 recipient: a Curve25519 public key, encoded `age1…` (Bech32).
public struct AgeX25519Recipient: AgeRecipient, Equatable, Sendable {
    static let hrp = "age"

    /// The public key.
    public let publicKey: Curve25519.KeyAgreement.PublicKey

    /// The recipient of `publicKey`.
    public init(publicKey: Curve25519.KeyAgreement.PublicKey) {
        self.publicKey = publicKey
    }

    /// Parses `age1…`.
    public init(encoded: String) throws(AgeError) {
        let (hrp, data) = try Bech32.decode(encoded)
        guard hrp == Self.hrp else { throw .invalidKey("not an age1… recipient") }
        guard data.count == 32, let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: data) else {
            throw .invalidKey("an X25519 recipient holds 32 bytes, this one \(data.count)")
        }
        self.publicKey = key
    }

    /// `age1…`, as `age -r` takes it.
    public var encoded: String {
        Bech32.encode(hrp: Self.hrp, data: Array(publicKey.rawRepresentation))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.publicKey.rawRepresentation == rhs.publicKey.rawRepresentation
    }

    public func wrap(fileKey: SymmetricKey, randomness: AgeRandomness) throws(AgeError) -> [AgeStanza] {
        let ephemeral = Invariant.privateKey(randomness.bytes(32))
        let share = Array(ephemeral.publicKey.rawRepresentation)
        guard let secret = try? ephemeral.sharedSecretFromKeyAgreement(with: publicKey),
            !secret.withUnsafeBytes({ bytes in bytes.allSatisfy { $0 == 0 } })
        else { throw .invalidKey("the recipient is a low-order point") }
        let wrapKey = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: share + Array(publicKey.rawRepresentation),
            sharedInfo: AgeX25519Identity.label, outputByteCount: 32)
        let body = StanzaAEAD.seal(fileKey: fileKey, wrapKey: wrapKey)
        return [AgeStanza(type: AgeX25519Identity.stanzaType, arguments: [AgeBase64.encodeUnpadded(share)], body: body)]
    }
}
