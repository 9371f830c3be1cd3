/// CT-KIP's key derivation as RSA's software performs it (RFC 4758 Appendix D.2, with RSA's
/// differences; see docs/ARCHITECTURE.md, "Tokens"): the PRF is AES-CMAC over the message followed
/// by the 32-bit block index (the RFC puts the index first), the token key is
/// `PRF(R_C, modulus ‖ "Key generation" ‖ R_S)` (the RFC puts the label first) and the server's MAC is
/// `PRF(K_TOKEN, "MAC 2 Computation" ‖ R_C)`.
public enum CTKIPPRF {
    /// `length` bytes of CT-KIP-PRF-AES under `key` (16 bytes) over `message`.
    public static func derive(key: [UInt8], message: [UInt8], length: Int = 16) -> [UInt8] {
        var output: [UInt8] = []
        var index: UInt32 = 1
        while output.count < length {
            let counter = (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * (3 - $0))) }
            output += cmac(key: key, message + counter)
            index += 1
        }
        return Array(output.prefix(length))
    }

    /// The token seed a CT-KIP exchange gives: from the client nonce, the server's RSA modulus
    /// (big-endian, no leading zeros) and the server nonce.
    public static func tokenKey(clientNonce: [UInt8], serverModulus: [UInt8], serverNonce: [UInt8]) -> [UInt8] {
        derive(key: clientNonce, message: serverModulus + Array("Key generation".utf8) + serverNonce)
    }

    /// The MAC the server sends in ServerFinished, proving it derived the same `tokenKey`.
    public static func serverMAC(tokenKey: [UInt8], clientNonce: [UInt8]) -> [UInt8] {
        derive(key: tokenKey, message: Array("MAC 2 Computation".utf8) + clientNonce)
    }

    /// AES-128-CMAC (RFC 4493).
    static func cmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        let zero = [UInt8](repeating: 0, count: 16)
        let k1 = double(SecurIDCrypto.encrypt(zero, key: key))
        let k2 = double(k1)
        let blocks = max(1, (message.count + 15) / 16)
        var last = Array(message[((blocks - 1) * 16)...])
        if last.count == 16 {
            last = zip(last, k1).map { $0 ^ $1 }
        } else {
            last += [0x80] + [UInt8](repeating: 0, count: 15 - last.count)
            last = zip(last, k2).map { $0 ^ $1 }
        }
        var state = zero
        for block in 0..<(blocks - 1) {
            let input = zip(state, message[(block * 16)..<(block * 16 + 16)]).map { $0 ^ $1 }
            state = SecurIDCrypto.encrypt(input, key: key)
        }
        return SecurIDCrypto.encrypt(zip(state, last).map { $0 ^ $1 }, key: key)
    }

    /// Multiplication by x in GF(2^128) (the CMAC subkey step).
    private static func double(_ block: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 {
            output[index] = block[index] << 1 | (index < 15 ? block[index + 1] >> 7 : 0)
        }
        if block[0] & 0x80 != 0 { output[15] ^= 0x87 }
        return output
    }
}
