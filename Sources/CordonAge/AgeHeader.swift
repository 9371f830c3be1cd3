import Crypto

/// An age v1 header: the version line, one or more stanzas and the MAC line
/// (`--- ` + base64 HMAC-SHA-256 under HKDF(file key, "header") of everything up to `---`).
public struct AgeHeader: Equatable, Sendable {
    /// Body lines are wrapped at this many columns.
    static let columns = 64
    static let versionLine = Array("age-encryption.org/v1\n".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let macMark = Array("---".utf8)

    /// The stanzas, in order.
    public var stanzas: [AgeStanza]
    /// The 32-byte MAC from the last line.
    public var mac: [UInt8]
    /// The bytes the MAC covers: the header as read, up to and including `---`.
    public var authenticatedBytes: [UInt8]

    /// A header of `stanzas` sealed with `fileKey`: its bytes, ending with the MAC line's LF.
    public static func encode(stanzas: [AgeStanza], fileKey: SymmetricKey) -> [UInt8] {
        var output = versionLine
        for stanza in stanzas { output += stanza.encoded() }
        output += macMark
        let mac = computeMAC(over: output, fileKey: fileKey)
        output.append(0x20)
        output += AgeBase64.encode(mac, padded: false)
        output.append(0x0A)
        return output
    }

    /// HMAC-SHA-256 of `bytes` under HKDF-SHA-256(ikm: file key, salt: empty, info: "header").
    static func computeMAC(over bytes: [UInt8], fileKey: SymmetricKey) -> [UInt8] {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: fileKey, info: Array("header".utf8), outputByteCount: 32)
        return Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    /// True when the MAC matches under `fileKey` (compared in constant time).
    public func verifyMAC(fileKey: SymmetricKey) -> Bool {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: fileKey, info: Array("header".utf8), outputByteCount: 32)
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: authenticatedBytes, using: key)
    }
}
