/// Writes a decrypted SecurID token as a v3 or v4 CTF string (base64, URL-encoded as RSA's apps
/// write it), sealed with an optional password and device id: the inverse of `SecurIDDecoder`.
public enum SecurIDEncoder {
    /// The `ctfData` value of `token`; `nonce` is 16 random bytes chosen by the caller.
    public static func encodeBinary(
        _ token: SecurIDToken, version: Int, password: String?, deviceID: String?, nonce: [UInt8]
    ) throws(TokenFormatError) -> String {
        guard version == 3 || version == 4 else {
            throw .invalidField(field: "version", reason: "only v3 and v4 tokens are written")
        }
        guard nonce.count == 16, token.seed.count == 16, token.serial.utf8.count == 12 else {
            throw .invalidField(field: "token", reason: "a token has a 12-digit serial and a 16-byte seed")
        }
        let pass = password.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        if let pass, pass.count > SecurIDDecoder.maximumPasswordLength {
            throw .invalidField(field: "password", reason: "it is longer than 40 bytes")
        }
        let device = SecurIDDecoder.scrubbedDeviceID(deviceID)
        var payload = Array(token.serial.utf8) + [UInt8](repeating: 0, count: 4)
        payload += token.seed
        payload += [1, 1, token.flags & SecurIDToken.Flag.feature4 != 0 ? 1 : 0, UInt8(token.digits)]
        payload += [token.pinMode == .pinless ? 0x1f : 0x21, UInt8(token.interval), 0, 0]
        payload += [UInt8](repeating: 0, count: 5 + 3)
        let ticks = UInt64(token.expiryDays + Int(SecurIDToken.epoch / 86_400)) * 337_500
        payload += (0..<5).map { UInt8(truncatingIfNeeded: ticks >> (8 * UInt64(4 - $0))) }
        payload += [UInt8](repeating: 0, count: 0x6b) + [UInt8](repeating: 0x10, count: 16)

        let key = SecurIDDecoder.binaryKey(
            version: version, password: pass, device: device, nonce: nonce[...], keyID: 1)
        guard let encrypted = SecurIDCrypto.encryptCBC(payload, key: key, iv: nonce) else {
            throw .invalidField(field: "token", reason: "the payload could not be encrypted")
        }
        var bytes: [UInt8] = [UInt8(version), pass == nil ? 0 : 1, deviceID.map { $0.isEmpty ? 0 : 1 } ?? 0]
        bytes += SecurIDDecoder.binaryHash(password: nil, device: device, nonce: nonce[...])
        bytes += SecurIDDecoder.binaryHash(password: pass, device: device, nonce: nonce[...])
        bytes += nonce + encrypted
        let macKey = SecurIDDecoder.binaryKey(
            version: version, password: pass, device: device, nonce: nonce[...], keyID: 0)
        bytes += SecurIDCrypto.hmacSHA256(key: macKey, bytes[...])
        var output = ""
        for character in Base64.encode(bytes).unicodeScalars {
            if character.properties.isAlphabetic || ("0"..."9").contains(character) {
                output.unicodeScalars.append(character)
            } else {
                output += PercentEncoding.encode(String(character))
            }
        }
        return output
    }
}

extension SecurIDToken {
    /// Refuses a token at or after its expiry (00:00:00 UTC of its expiry date).
    public func checkNotExpired(at time: Int64) throws(TokenFormatError) {
        if time >= expiry { throw .expired(expiryDay: expiryDay) }
    }
}
