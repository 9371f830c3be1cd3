extension PositionedJSONParser {
    /// A string starting at the opening quote; returns its decoded contents.
    mutating func parseString(path: PositionedJSON.Path) throws(PositionedJSONError) -> String {
        let (startLine, startColumn) = (line, column)
        advance()
        var scalars = String.UnicodeScalarView()
        while true {
            guard let byte = peek() else {
                throw PositionedJSONError(
                    kind: .unterminatedString, line: startLine, column: startColumn, pointer: path.pointer,
                    message: "unterminated string; expected a closing '\"' before the end of the document")
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(try parseEscape(path: path))
            case 0x0A, 0x0D:
                throw PositionedJSONError(
                    kind: .unterminatedString, line: startLine, column: startColumn, pointer: path.pointer,
                    message: "unterminated string; expected a closing '\"' before the end of the line")
            case 0x00..<0x20:
                throw failure(
                    .controlCharacter,
                    "unescaped control character U+\(PositionedJSON.hex(UInt32(byte), width: 4)) in a string; "
                        + "write it as an escape (\\t, \\u00XX)", path)
            case 0x20..<0x80:
                scalars.append(Unicode.Scalar(byte))
                advance()
            default:
                scalars.append(try readScalar(path: path))
            }
        }
    }

    /// One escape sequence starting at the backslash; a surrogate pair counts as one.
    private mutating func parseEscape(path: PositionedJSON.Path) throws(PositionedJSONError) -> Unicode.Scalar {
        let (escapeLine, escapeColumn) = (line, column)
        func escapeError(_ message: String) -> PositionedJSONError {
            PositionedJSONError(
                kind: .invalidEscape, line: escapeLine, column: escapeColumn, pointer: path.pointer, message: message)
        }
        advance()
        guard let byte = peek() else {
            throw failure(.unterminatedString, "unterminated string; expected an escape after '\\'", path)
        }
        let simple: [UInt8: Unicode.Scalar] = [
            UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{08}",
            UInt8(ascii: "f"): "\u{0C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
        ]
        if let scalar = simple[byte] {
            advance()
            return scalar
        }
        guard byte == UInt8(ascii: "u") else {
            let shown =
                (0x21...0x7E).contains(byte)
                ? "'\\\(Character(Unicode.Scalar(byte)))'" : "'\\' before \(currentDescription)"
            throw escapeError(
                "invalid escape \(shown) in a string; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
        advance()
        guard let unit = readHex4() else {
            throw escapeError("invalid \\u escape; expected exactly 4 hexadecimal digits after \\u")
        }
        let unpaired = "unpaired surrogate \\u" + PositionedJSON.hex(unit, width: 4)
        switch unit {
        case 0xD800...0xDBFF:
            guard peek() == UInt8(ascii: "\\"), peek(ahead: 1) == UInt8(ascii: "u") else {
                throw escapeError(unpaired + "; expected a low surrogate \\uDC00-\\uDFFF after it")
            }
            advance()
            advance()
            guard let low = readHex4(), (0xDC00...0xDFFF).contains(low) else {
                throw escapeError(unpaired + "; expected a low surrogate \\uDC00-\\uDFFF after it")
            }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}"
        case 0xDC00...0xDFFF:
            throw escapeError(unpaired + "; a low surrogate must follow a high surrogate")
        default:
            return Unicode.Scalar(unit) ?? "\u{FFFD}"
        }
    }

    /// Four hexadecimal digits, consumed only if all four are there.
    private mutating func readHex4() -> UInt32? {
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = Self.hexValue(peek(ahead: offset)) else { return nil }
            value = value << 4 | digit
        }
        for _ in 0..<4 { advance() }
        return value
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func parseNumber(path: PositionedJSON.Path) throws(PositionedJSONError) -> PositionedJSON.Number {
        let start = index
        if peek() == UInt8(ascii: "-") {
            advance()
            guard Self.isDigit(peek()) else {
                throw failure(
                    .invalidNumber, "invalid number; expected a digit after '-', got \(currentDescription)", path)
            }
        }
        if peek() == UInt8(ascii: "0") {
            advance()
            if Self.isDigit(peek()) {
                throw failure(.invalidNumber, "invalid number; leading zeros are not allowed", path)
            }
        } else {
            while Self.isDigit(peek()) { advance() }
        }
        if peek() == UInt8(ascii: ".") {
            advance()
            guard Self.isDigit(peek()) else {
                throw failure(
                    .invalidNumber, "invalid number; expected a digit after '.', got \(currentDescription)", path)
            }
            while Self.isDigit(peek()) { advance() }
        }
        if let byte = peek(), byte | 0x20 == UInt8(ascii: "e") {
            advance()
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { advance() }
            guard Self.isDigit(peek()) else {
                throw failure(
                    .invalidNumber, "invalid number; expected a digit in the exponent, got \(currentDescription)",
                    path)
            }
            while Self.isDigit(peek()) { advance() }
        }
        return PositionedJSON.Number(text: String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// `true`, `false` or `null`; any other bare word is an error that names it.
    mutating func parseLiteral(path: PositionedJSON.Path) throws(PositionedJSONError) -> PositionedJSON.Value {
        let start = index
        var end = index
        while end < bytes.count, end - start < 32, isWordByte(bytes[end]) { end += 1 }
        switch Array(bytes[start..<end]) {
        case Array("true".utf8):
            for _ in start..<end { advance() }
            return .bool(true)
        case Array("false".utf8):
            for _ in start..<end { advance() }
            return .bool(false)
        case Array("null".utf8):
            for _ in start..<end { advance() }
            return .null
        case let word:
            let shown = String(decoding: word, as: UTF8.self)
            throw failure(
                .invalidLiteral,
                "expected a value, got '\(shown)'; the literals are true, false and null (lower case, unquoted)",
                path)
        }
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || Self.isDigit(byte)
            || byte == UInt8(ascii: "_")
    }
}
