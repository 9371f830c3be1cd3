/// RFC 4648 base32 (the `secret` of an `otpauth://` URI): upper- or lower-case, padding optional.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Decodes `text`; `field` names it in the error. Padding, when present, must be complete and last.
    public static func decode(_ text: String, field: String = "secret") throws(TokenFormatError) -> [UInt8] {
        var body = Array(text.utf8)
        var padding = 0
        while body.last == UInt8(ascii: "=") {
            body.removeLast()
            padding += 1
        }
        if padding > 0, (body.count + padding) % 8 != 0 {
            throw .invalidField(field: field, reason: "base32 padding is incomplete")
        }
        // Lengths 1, 3 and 6 (mod 8) cannot end a whole byte.
        if [1, 3, 6].contains(body.count % 8) {
            throw .invalidField(field: field, reason: "base32 length \(body.count) is not a whole number of bytes")
        }
        var output: [UInt8] = []
        output.reserveCapacity(body.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for (index, character) in body.enumerated() {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = character - UInt8(ascii: "2") + 26
            default:
                throw .invalidField(field: field, reason: "character \(index + 1) is not base32")
            }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xff))
            }
        }
        return output
    }

    /// Encodes `bytes` with padding (`=`) to a multiple of 8 characters.
    public static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1f)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1f)])
        }
        if padded {
            while output.count % 8 != 0 { output.append(UInt8(ascii: "=")) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
