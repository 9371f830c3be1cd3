import Foundation

/// A SecurID token as a CTF string carries it, before any decryption: the 81-digit v2 form (v1 too)
/// or the base64 v3/v4 blob. Reading it needs no key; `SecurIDDecoder` checks and decrypts it.
public enum SecurIDEncodedToken: Sendable, Equatable {
    /// A numeric (v1/v2) token.
    case numeric(SecurIDNumericToken)
    /// A v3 or v4 token (the version is its first byte).
    case binary(SecurIDBinaryToken)
}

/// The fields of an 81-digit (v2) CTF string.
public struct SecurIDNumericToken: Sendable, Equatable {
    /// The digits the checksum covers (all but the last 5) and the checksum digits.
    public var digits: [UInt8]
    public var version: Int
    public var serial: String
    public var encryptedSeed: [UInt8]
    public var flags: UInt16
    public var expiryDays: UInt16
    public var seedHash: UInt16
    public var deviceIDHash: UInt16
    /// The 15-bit checksum written in the last 5 digits.
    public var checksum: UInt16
    /// Whether it came in a smartphone URL (the device id is then 40 hex digits, else 32).
    public var isSmartphone: Bool
}

/// A v3 or v4 CTF token: 291 bytes.
public struct SecurIDBinaryToken: Sendable, Equatable {
    public static let size = 0x123
    public var bytes: [UInt8]
    public var version: Int { Int(bytes[0]) }
    public var passwordLocked: Bool { bytes[1] != 0 }
    public var deviceLocked: Bool { bytes[2] != 0 }
    var nonceDeviceHash: ArraySlice<UInt8> { bytes[3..<35] }
    var nonceDevicePasswordHash: ArraySlice<UInt8> { bytes[35..<67] }
    var nonce: ArraySlice<UInt8> { bytes[67..<83] }
    var encryptedPayload: ArraySlice<UInt8> { bytes[83..<259] }
    var mac: ArraySlice<UInt8> { bytes[259..<291] }
}

/// Reads CTF strings: bare digits (with optional `-` separators), bare v3/v4 base64 (URL-encoded or
/// not), or any of them inside `<scheme>://ctf?ctfData=…`.
public enum CTFString {
    /// The longest input read.
    public static let maximumLength = 2048

    public static func parse(_ input: String) throws(TokenFormatError) -> SecurIDEncodedToken {
        let text = input.trimmingWhitespace()
        if text.utf8.count > maximumLength {
            throw .invalidField(field: "ctfData", reason: "it is longer than \(maximumLength) bytes")
        }
        var payload = Substring(text)
        var isSmartphone = false
        if let schemeEnd = text.range(of: "://") {
            let afterScheme = text[schemeEnd.upperBound...]
            guard let query = afterScheme.firstIndex(of: "?"), afterScheme[..<query].hasSuffix("ctf") else {
                throw .invalidField(field: "ctfData", reason: "a token URL has the form <scheme>://ctf?ctfData=…")
            }
            let items = try PercentEncoding.queryItems(
                afterScheme[afterScheme.index(after: query)...], context: "query", plusIsSpace: false)
            guard let data = items["ctfdata"], !data.isEmpty else {
                throw .invalidField(field: "ctfData", reason: "the URL has no ctfData parameter")
            }
            payload = Substring(data)
            isSmartphone = true
        }
        guard let first = payload.first else { throw .invalidField(field: "ctfData", reason: "it is empty") }
        switch first {
        case "1", "2": return .numeric(try numeric(payload, isSmartphone: isSmartphone))
        case "A", "B": return .binary(try binary(payload))
        default:
            throw .invalidField(field: "ctfData", reason: "it is neither a v2 (digits) nor a v3/v4 (base64) token")
        }
    }

    private static func numeric(_ text: Substring, isSmartphone: Bool) throws(TokenFormatError)
        -> SecurIDNumericToken
    {
        var digits: [UInt8] = []
        for (index, character) in text.utf8.enumerated() {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(character - UInt8(ascii: "0"))
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            default: throw .invalidField(field: "ctfData", reason: "character \(index + 1) is not a digit")
            }
        }
        guard (81...85).contains(digits.count) else {
            throw .invalidField(field: "ctfData", reason: "a v2 token has 81 digits, not \(digits.count)")
        }
        let checksumBits = bits(fromDigits: digits[(digits.count - 5)...], count: 15)
        let body = bits(fromDigits: digits[13..<(13 + 63)], count: 189)
        return SecurIDNumericToken(
            digits: digits, version: Int(digits[0]),
            serial: String(digits[1..<13].map { Character(Unicode.Scalar($0 + UInt8(ascii: "0"))) }),
            encryptedSeed: Array(body[0..<16]),
            flags: UInt16(readBits(body, start: 128, count: 16)),
            expiryDays: UInt16(readBits(body, start: 144, count: 14)),
            seedHash: UInt16(readBits(body, start: 159, count: 15)),
            deviceIDHash: UInt16(readBits(body, start: 174, count: 15)),
            checksum: UInt16(readBits(checksumBits, start: 0, count: 15)), isSmartphone: isSmartphone)
    }

    private static func binary(_ text: Substring) throws(TokenFormatError) -> SecurIDBinaryToken {
        let decoded = try PercentEncoding.decode(text, field: "ctfData")
        let bytes = try Base64.decode(decoded, field: "ctfData")
        guard bytes.count == SecurIDBinaryToken.size else {
            throw .invalidField(field: "ctfData", reason: "a v3/v4 token is 291 bytes, not \(bytes.count)")
        }
        guard bytes[0] == 3 || bytes[0] == 4 else {
            throw .invalidField(field: "ctfData", reason: "token version \(bytes[0]) is not 3 or 4")
        }
        return SecurIDBinaryToken(bytes: bytes)
    }

    /// Packs 3 bits per digit, most significant first (the CTF numeric encoding).
    static func bits(fromDigits digits: ArraySlice<UInt8>, count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: (count + 7) / 8 + 1)
        var bit = 0
        for digit in digits where bit < count {
            for offset in 0..<3 where ((digit & 7) >> (2 - offset)) & 1 == 1 && bit + offset < output.count * 8 {
                output[(bit + offset) / 8] |= 0x80 >> UInt8((bit + offset) % 8)
            }
            bit += 3
        }
        return output
    }

    static func readBits(_ bytes: [UInt8], start: Int, count: Int) -> UInt32 {
        var value: UInt32 = 0
        for bit in start..<(start + count) {
            value = value << 1 | UInt32((bytes[bit / 8] >> UInt8(7 - bit % 8)) & 1)
        }
        return value
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
