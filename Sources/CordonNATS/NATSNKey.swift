/// A NATS user's public key in the NKey text form the server's configuration lists (`U…`): the
/// prefix byte of a user, the 32-byte Ed25519 public key and a CRC-16 (XMODEM), base32 without
/// padding. The key itself signs the server's nonce (`NATSOptions.signer`); no seed is written anywhere.
public enum NATSNKey {
    /// The prefix byte of a user key (`20 << 3`: base32 `U`).
    static let userPrefix: UInt8 = 20 << 3

    /// The text form of an Ed25519 user public key.
    public static func user(publicKey: [UInt8]) -> String {
        precondition(publicKey.count == 32, "an Ed25519 public key is 32 bytes")
        var raw = [userPrefix] + publicKey
        let crc = crc16(raw)
        raw += [UInt8(crc & 0xff), UInt8(crc >> 8)]
        return base32(raw)
    }

    /// The 32-byte public key of a user key's text form, or nil when it is not one (prefix,
    /// length, alphabet or checksum wrong).
    public static func publicKey(ofUser text: String) -> [UInt8]? {
        guard let raw = unbase32(text), raw.count == 35, raw[0] == userPrefix else { return nil }
        let body = Array(raw[0..<33])
        let crc = UInt16(raw[33]) | UInt16(raw[34]) << 8
        guard crc16(body) == crc else { return nil }
        return Array(body[1...])
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func unbase32(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xff))
            }
        }
        return out
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0), as the NKey format uses.
    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? crc << 1 ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}
