/// Standard base64 (RFC 4648 §4), padding optional; whitespace is refused, errors give the offset.
public enum Base64 {
    /// Decodes `text`; `field` names it in the error.
    public static func decode(_ text: String, field: String) throws(TokenFormatError) -> [UInt8] {
        var body = Array(text.utf8)
        while body.last == UInt8(ascii: "=") { body.removeLast() }
        if Array(text.utf8).count - body.count > 2 || body.count % 4 == 1 {
            throw .invalidField(field: field, reason: "base64 length is not valid")
        }
        var output: [UInt8] = []
        output.reserveCapacity(body.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for (index, character) in body.enumerated() {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            default: throw .malformed(format: "base64", offset: index, reason: "\(field) has a non-base64 character")
            }
            buffer = (buffer << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xff))
            }
        }
        return output
    }

    /// Encodes `bytes` with padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                output.append(
                    position <= chunk.count ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3f)] : 61)
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
