import Crypto
import _CryptoExtras

/// Passphrase encryption: an `scrypt` stanza (N = 2^workFactor, r = 8, p = 1, salt
/// "age-encryption.org/v1/scrypt" || 16 random bytes). The spec requires it to be the only
/// stanza, which `AgeEncryptor` and `AgeDecryptor` enforce.
public struct AgeScryptRecipient: AgeRecipient, Sendable {
    static let stanzaType = "scrypt"
    static let saltLabel = Array("age-encryption.org/v1/scrypt".utf8)
    static let saltSize = 16

    let passphrase: [UInt8]
    /// log2 of the scrypt N parameter.
    public let workFactor: Int

    /// A recipient for `passphrase` (not empty) at `workFactor` (1…30; age's CLI uses 18).
    public init(passphrase: String, workFactor: Int = 18) throws(AgeError) {
        guard !passphrase.isEmpty else { throw .invalidArgument("the passphrase is empty") }
        guard (1...30).contains(workFactor) else {
            throw .invalidArgument("scrypt work factor \(workFactor) is not in 1…30")
        }
        self.passphrase = Array(passphrase.utf8)
        self.workFactor = workFactor
    }

    public func wrap(fileKey: SymmetricKey, randomness: AgeRandomness) throws(AgeError) -> [AgeStanza] {
        let salt = randomness.bytes(Self.saltSize)
        let wrapKey = try Self.deriveKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        let body = StanzaAEAD.seal(fileKey: fileKey, wrapKey: wrapKey)
        return [
            AgeStanza(
                type: Self.stanzaType, arguments: [AgeBase64.encodeUnpadded(salt), String(workFactor)], body: body)
        ]
    }

    static func deriveKey(passphrase: [UInt8], salt: [UInt8], workFactor: Int) throws(AgeError) -> SymmetricKey {
        do {
            return try KDF.Scrypt.deriveKey(
                from: passphrase, salt: saltLabel + salt, outputByteCount: 32, rounds: 1 << workFactor,
                blockSize: 8, parallelism: 1)
        } catch {
            throw .invalidArgument("scrypt failed at work factor \(workFactor) (memory?)")
        }
    }
}

/// Opens an `scrypt` stanza with a passphrase, refusing work factors over `maximumWorkFactor`.
public struct AgeScryptIdentity: AgeIdentity, Sendable {
    let passphrase: [UInt8]
    /// The largest log2 N accepted: 20 by default (1 GiB of scrypt memory, about a second).
    public let maximumWorkFactor: Int

    /// An identity for `passphrase` (not empty).
    public init(passphrase: String, maximumWorkFactor: Int = 20) throws(AgeError) {
        guard !passphrase.isEmpty else { throw .invalidArgument("the passphrase is empty") }
        self.passphrase = Array(passphrase.utf8)
        self.maximumWorkFactor = maximumWorkFactor
    }

    public func unwrap(stanzas: [AgeStanza]) throws(AgeError) -> SymmetricKey? {
        for stanza in stanzas where stanza.type == AgeScryptRecipient.stanzaType {
            if let fileKey = try unwrap(stanza) { return fileKey }
        }
        return nil
    }

    private func unwrap(_ stanza: AgeStanza) throws(AgeError) -> SymmetricKey? {
        let type = AgeScryptRecipient.stanzaType
        guard stanza.arguments.count == 2 else {
            throw .invalidStanza(type: type, reason: "it must have exactly two arguments, the salt and the work factor")
        }
        guard let salt = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8), salt.count == AgeScryptRecipient.saltSize
        else { throw .invalidStanza(type: type, reason: "the salt is not canonical base64 of 16 bytes") }
        let factor = Array(stanza.arguments[1].utf8)
        // ^[1-9][0-9]*$, and short enough to be a number at all.
        guard let first = factor.first, (0x31...0x39).contains(first), factor.allSatisfy({ (0x30...0x39).contains($0) })
        else {
            throw .invalidStanza(type: type, reason: "the work factor is not a decimal number without leading zeros")
        }
        guard factor.count <= 2, let workFactor = Int(stanza.arguments[1]), workFactor <= maximumWorkFactor else {
            throw .workFactorTooLarge(Int(stanza.arguments[1]) ?? Int.max, maximum: maximumWorkFactor)
        }
        guard stanza.body.count == StanzaAEAD.bodySize else {
            throw .invalidStanza(type: type, reason: "the body is \(stanza.body.count) bytes, not 32")
        }
        let wrapKey = try AgeScryptRecipient.deriveKey(passphrase: passphrase, salt: salt, workFactor: workFactor)
        return StanzaAEAD.open(body: stanza.body, wrapKey: wrapKey)
    }
}
