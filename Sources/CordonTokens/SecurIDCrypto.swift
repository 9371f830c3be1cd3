import Crypto
import _CryptoExtras

/// The block operations SecurID is built on (AES-128 single blocks, its AES-based MAC, SHA-256,
/// PBKDF2), written from stoken's description of the algorithm (docs/ARCHITECTURE.md, "Tokens").
enum SecurIDCrypto {
    /// AES-128 in the encryption direction on one 16-byte block.
    static func encrypt(_ block: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = block
        // Both sizes are fixed at 16 by every caller, so the permutation cannot fail.
        try? AES.permute(&output, key: SymmetricKey(data: key))
        return output
    }

    /// AES-128 in the decryption direction on one 16-byte block.
    static func decrypt(_ block: [UInt8], key: [UInt8]) -> [UInt8] {
        var output = block
        try? AES.inversePermute(&output, key: SymmetricKey(data: key))
        return output
    }

    /// `work ^= AES(key, work)`: the step of the SecurID MAC.
    private static func encryptThenXor(key: [UInt8], work: inout [UInt8]) {
        let encrypted = encrypt(work, key: key)
        for index in 0..<16 { work[index] ^= encrypted[index] }
    }

    /// SecurID's 16-byte MAC: a Davies–Meyer-style chain with each input block as the AES key.
    static func mac(_ input: [UInt8]) -> [UInt8] {
        var work = [UInt8](repeating: 0xff, count: 16)
        var padding = [UInt8](repeating: 0, count: 16)
        var length = input.count * 8
        var position = 15
        while length > 0 {
            padding[position] = UInt8(truncatingIfNeeded: length)
            length >>= 8
            position -= 1
        }
        var offset = 0
        var remaining = input.count
        var odd = false
        while remaining > 16 {
            encryptThenXor(key: Array(input[offset..<offset + 16]), work: &work)
            offset += 16
            remaining -= 16
            odd.toggle()
        }
        var last = [UInt8](repeating: 0, count: 16)
        last.replaceSubrange(0..<remaining, with: input[offset..<offset + remaining])
        encryptThenXor(key: last, work: &work)
        if odd { encryptThenXor(key: [UInt8](repeating: 0, count: 16), work: &work) }
        encryptThenXor(key: padding, work: &work)
        var output = work
        encryptThenXor(key: work, work: &output)
        return output
    }

    /// The 15-bit short MAC the v2 format checks its fields with.
    static func shortMAC(_ input: [UInt8]) -> UInt16 {
        let hash = mac(input)
        return UInt16(hash[0]) << 7 | UInt16(hash[1] >> 1)
    }

    static func sha256(_ input: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: input)) }

    static func hmacSHA256(key: [UInt8], _ message: ArraySlice<UInt8>) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// PBKDF2-HMAC-SHA256 with the format's fixed 1000 rounds (a file format, not a password store).
    static func pbkdf2(password: [UInt8], salt: ArraySlice<UInt8>, rounds: Int) -> [UInt8] {
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key?.withUnsafeBytes { Array($0) } ?? []
    }

    /// AES-256-CBC decryption without padding (whole blocks).
    static func decryptCBC(_ input: ArraySlice<UInt8>, key: [UInt8], iv: ArraySlice<UInt8>) -> [UInt8]? {
        guard let vector = try? AES._CBC.IV(ivBytes: Array(iv)),
            let plain = try? AES._CBC.decrypt(input, using: SymmetricKey(data: key), iv: vector, noPadding: true)
        else { return nil }
        return Array(plain)
    }

    /// AES-256-CBC encryption without padding (whole blocks).
    static func encryptCBC(_ input: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        guard let vector = try? AES._CBC.IV(ivBytes: iv),
            let cipher = try? AES._CBC.encrypt(input, using: SymmetricKey(data: key), iv: vector, noPadding: true)
        else { return nil }
        return Array(cipher)
    }
}
