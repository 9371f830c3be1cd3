extension PositionedJSONParser {
    /// The current byte, or nil at the end.
    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The byte `offset` places ahead, or nil past the end.
    func peek(ahead offset: Int) -> UInt8? {
        let position = index + offset
        return position < bytes.count ? bytes[position] : nil
    }

    /// Moves one byte on, keeping the line and column (columns count Unicode scalars; CR LF,
    /// LF and a lone CR each end a line).
    mutating func advance() {
        guard index < bytes.count else { return }
        let byte = bytes[index]
        index += 1
        switch byte {
        case 0x0A:
            line += 1
            column = 1
        case 0x0D:
            if index < bytes.count, bytes[index] == 0x0A {
                column += 1
            } else {
                line += 1
                column = 1
            }
        case 0x80...0xBF:
            break  // a UTF-8 continuation byte: same scalar, same column
        default:
            column += 1
        }
    }

    /// Skips JSON whitespace: space, tab, line feed, carriage return (RFC 8259 §2).
    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            advance()
        }
    }

    /// An error at the current position.
    func failure(_ kind: PositionedJSONError.Kind, _ message: String, _ path: PositionedJSON.Path)
        -> PositionedJSONError
    {
        PositionedJSONError(kind: kind, line: line, column: column, pointer: path.pointer, message: message)
    }

    /// The current character as a message shows it after "got".
    var currentDescription: String {
        guard let byte = peek() else { return "the end of the document" }
        switch byte {
        case UInt8(ascii: "'"):
            return "\"'\" (JSON strings and keys take double quotes)"
        case UInt8(ascii: "/"):
            return "'/' (JSON has no comments)"
        case 0x21...0x7E:
            return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x00...0x7F:
            return "U+" + PositionedJSON.hex(UInt32(byte), width: 4)
        default:
            if let (scalar, _) = scalar(at: index) {
                return "'\(Character(scalar))' (U+\(PositionedJSON.hex(scalar.value, width: 4)))"
            }
            return "the byte 0x" + PositionedJSON.hex(UInt32(byte), width: 2) + ", which is not valid UTF-8"
        }
    }

    /// Decodes the well-formed UTF-8 sequence at `start` (Unicode Table 3-7: no overlong forms,
    /// no surrogates, nothing above U+10FFFF), or nil.
    func scalar(at start: Int) -> (Unicode.Scalar, length: Int)? {
        guard start < bytes.count else { return nil }
        let lead = bytes[start]
        let length: Int
        var value: UInt32
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0x00...0x7F:
            return (Unicode.Scalar(lead), 1)
        case 0xC2...0xDF:
            length = 2
            value = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            value = UInt32(lead & 0x0F)
            if lead == 0xE0 { secondRange = 0xA0...0xBF }
            if lead == 0xED { secondRange = 0x80...0x9F }
        case 0xF0...0xF4:
            length = 4
            value = UInt32(lead & 0x07)
            if lead == 0xF0 { secondRange = 0x90...0xBF }
            if lead == 0xF4 { secondRange = 0x80...0x8F }
        default:
            return nil
        }
        guard start + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[start + offset]
            guard (offset == 1 ? secondRange : 0x80...0xBF).contains(byte) else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }

    /// Reads the UTF-8 sequence at the current position, or fails naming the offending byte.
    mutating func readScalar(path: PositionedJSON.Path) throws(PositionedJSONError) -> Unicode.Scalar {
        guard let (scalar, length) = scalar(at: index) else {
            let byte = peek() ?? 0
            throw failure(
                .invalidUTF8,
                "invalid UTF-8: the byte 0x\(PositionedJSON.hex(UInt32(byte), width: 2)) is not allowed here",
                path)
        }
        for _ in 0..<length { advance() }
        return scalar
    }

    /// Whether `byte` is an ASCII decimal digit.
    static func isDigit(_ byte: UInt8?) -> Bool {
        guard let byte else { return false }
        return byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// The value of `byte` as a hexadecimal digit, or nil.
    static func hexValue(_ byte: UInt8?) -> UInt32? {
        switch byte {
        case let byte? where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"):
            return UInt32(byte - UInt8(ascii: "0"))
        case let byte? where byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"):
            return UInt32(byte - UInt8(ascii: "a") + 10)
        case let byte? where byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"):
            return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
