/// The two base64 forms age uses (RFC 4648 §4 alphabet): unpadded and canonical in the header,
/// padded and canonical in the ASCII armor. Decoders reject every non-canonical encoding.
public enum AgeBase64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes without padding (the header form).
    public static func encodeUnpadded(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(Array(bytes), padded: false), as: UTF8.self)
    }

    /// Encodes `bytes`, with `=` padding when `padded`.
    static func encode(_ bytes: [UInt8], padded: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            output.append(alphabet[Int(word >> 6 & 63)])
            output.append(alphabet[Int(word & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let word = UInt32(bytes[index]) << 16
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            if padded { output.append(contentsOf: [0x3D, 0x3D]) }
        } else if rest == 2 {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            output.append(alphabet[Int(word >> 6 & 63)])
            if padded { output.append(0x3D) }
        }
        return output
    }

    /// Decodes unpadded canonical base64; nil for any other character, padding, an impossible
    /// length, or non-zero unused bits.
    public static func decodeUnpadded(_ text: some Collection<UInt8>) -> [UInt8]? {
        decode(Array(text), padded: false)
    }

    /// Decodes `text`: unpadded, or (when `padded`) with exactly the padding its length needs.
    static func decode(_ input: [UInt8], padded: Bool) -> [UInt8]? {
        var text = input[...]
        var padding = 0
        if padded {
            guard input.count % 4 == 0 else { return nil }
            while padding < 2, text.last == 0x3D {
                text = text.dropLast()
                padding += 1
            }
        }
        guard text.count % 4 != 1 else { return nil }
        if padded, (4 - text.count % 4) % 4 != padding { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Canonical: the bits left over must be zero.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
