/// A NATS user's public key in the NKey text form the server's configuration lists (`U…`): the
/// prefix byte of a user, the 32-byte Ed25519 public key and a CRC-16 (XMODEM), base32 without
/// padding. The key itself signs the server's nonce (`NATSOptions.signer`); no seed is written anywhere.
public enum NATSNKey {
    /// The prefix byte of a user key (`20 << 3`: base32 `U`).
    static let userPrefix: UInt8 = 20 << 3
    /// The prefix byte of a seed (`18 << 3`: base32 `S`); a user seed reads `SU…`.
    static let seedPrefix: UInt8 = 18 << 3

    /// A user seed in the text form NATS tools read and write (`SU…`, 58 characters).
    public static func userSeed(_ seed: [UInt8]) -> String {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        var raw = [seedPrefix | userPrefix >> 5, (userPrefix & 31) << 3] + seed
        let crc = crc16(raw)
        raw += [UInt8(crc & 0xff), UInt8(crc >> 8)]
        return base32(raw)
    }

    /// The 32-byte seed of a user seed's text form, or nil when it is not one.
    public static func seed(ofUser text: String) -> [UInt8]? {
        guard let raw = unbase32(text.trimmingWhitespace), raw.count == 36,
            raw[0] == seedPrefix | userPrefix >> 5, raw[1] == (userPrefix & 31) << 3
        else { return nil }
        let body = Array(raw[0..<34])
        guard crc16(body) == UInt16(raw[34]) | UInt16(raw[35]) << 8 else { return nil }
        return Array(body[2...])
    }

    /// Whether `nonce` is what a NATS server sends to be signed: a short token of the base64
    /// alphabets. Anything else (a JSON document, a report, metadata) is never signed: the key that
    /// signs nonces may sign other things too, and a server must not obtain those signatures.
    public static func isNonce(_ nonce: [UInt8]) -> Bool {
        (8...128).contains(nonce.count)
            && nonce.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a)
                    || $0 == 0x2d || $0 == 0x5f || $0 == 0x2b || $0 == 0x2f || $0 == 0x3d
            }
    }

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

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
