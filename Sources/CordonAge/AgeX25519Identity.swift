import Crypto

/// An age X25519 identity: a Curve25519 private key, encoded `AGE-SECRET-KEY-1…` (Bech32).
/// It opens `X25519` stanzas addressed to its `recipient`.
public struct AgeX25519Identity: AgeIdentity, Sendable {
    static let hrp = "AGE-SECRET-KEY-"
    static let stanzaType = "X25519"
    static let label = Array("age-encryption.org/v1/X25519".utf8)
    /// The HKDF info of `derived(fromAppKey:)`. Changing it changes every app's file identity.
    public static let appKeyDerivationLabel = "io.cordon.age.identity.v1"

    /// The private key.
    public let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// The identity of `privateKey`.
    public init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
    }

    /// A new identity from `randomness`.
    public static func generate(randomness: AgeRandomness = .system) -> AgeX25519Identity {
        AgeX25519Identity(privateKey: Invariant.privateKey(randomness.bytes(32)))
    }

    /// Parses `AGE-SECRET-KEY-1…` (upper case, as age writes it; lower case is accepted too).
    public init(encoded: String) throws(AgeError) {
        let (hrp, data) = try Bech32.decode(encoded)
        guard hrp == Self.hrp.lowercased() else { throw .invalidKey("not an AGE-SECRET-KEY-1… identity") }
        guard data.count == 32, let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: data) else {
            throw .invalidKey("an X25519 identity holds 32 bytes, this one \(data.count)")
        }
        self.privateKey = key
    }

    /// The identity an app's files are encrypted to, derived from its app key:
    /// `HKDF-SHA256(ikm: appKey, salt: empty, info: "io.cordon.age.identity.v1", 32 bytes)` taken
    /// as the X25519 private key (X25519 clamps it). The same app key always gives the same
    /// identity, so `age -d -i` with the exported identity opens the app's files.
    public static func derived(fromAppKey appKey: SymmetricKey) -> AgeX25519Identity {
        let seed = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: appKey, info: Array(appKeyDerivationLabel.utf8), outputByteCount: 32)
        return AgeX25519Identity(privateKey: Invariant.privateKey(seed))
    }

    /// The recipient files for this identity are encrypted to.
    public var recipient: AgeX25519Recipient {
        AgeX25519Recipient(publicKey: privateKey.publicKey)
    }

    /// `AGE-SECRET-KEY-1…`, as age's key files hold it.
    public var encoded: String {
        Bech32.encode(hrp: Self.hrp, data: Array(privateKey.rawRepresentation))
    }

    public func unwrap(stanzas: [AgeStanza]) throws(AgeError) -> SymmetricKey? {
        for stanza in stanzas where stanza.type == Self.stanzaType {
            if let fileKey = try unwrap(stanza) { return fileKey }
        }
        return nil
    }

    private func unwrap(_ stanza: AgeStanza) throws(AgeError) -> SymmetricKey? {
        guard stanza.arguments.count == 1 else {
            throw .invalidStanza(type: Self.stanzaType, reason: "it must have exactly one argument, the share")
        }
        guard let share = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8), share.count == 32 else {
            throw .invalidStanza(type: Self.stanzaType, reason: "the share is not canonical base64 of 32 bytes")
        }
        guard stanza.body.count == StanzaAEAD.bodySize else {
            throw .invalidStanza(type: Self.stanzaType, reason: "the body is \(stanza.body.count) bytes, not 32")
        }
        guard let publicShare = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: share),
            let secret = try? privateKey.sharedSecretFromKeyAgreement(with: publicShare)
        else { throw .invalidStanza(type: Self.stanzaType, reason: "the share is not a Curve25519 point") }
        let isZero = secret.withUnsafeBytes { bytes in bytes.reduce(0) { $0 | $1 } == 0 }
        guard !isZero else {
            throw .invalidStanza(type: Self.stanzaType, reason: "the share gives the all-zero shared secret")
        }
        let wrapKey = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: share + privateKey.publicKey.rawRepresentation,
            sharedInfo: Self.label, outputByteCount: 32)
        return StanzaAEAD.open(body: stanza.body, wrapKey: wrapKey)
    }
}
