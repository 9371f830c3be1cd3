import Crypto

// The header MAC, apart from the header's grammar so the parser builds without swift-crypto
// (the libFuzzer target compiles the parsing files alone: Fuzz/README.md).
extension AgeHeader {
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
