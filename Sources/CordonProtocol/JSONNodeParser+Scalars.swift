extension JSONNodeParser {
    /// A string token (at its opening quote): escapes resolved, UTF-8 validated.
    mutating func string() throws(Failure) -> String {
        let start = index
        index += 1
        var plainEnd = index
        while plainEnd < bytes.count {
            let byte = bytes[plainEnd]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            plainEnd += 1
        }
        guard plainEnd < bytes.count else { throw failure("unterminated string", at: start) }
        if bytes[plainEnd] == UInt8(ascii: "\"") {
            let text = try utf8(index..<plainEnd)
            index = plainEnd + 1
            return text
        }
        var scratch = Array(bytes[index..<plainEnd])
        index = plainEnd
        while true {
            guard let byte = current else { throw failure("unterminated string", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scratch, as: UTF8.self) else {
                    throw failure("a string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &scratch)
            case 0..<0x20:
                throw failure("a control character must be escaped in a string")
            default:
                scratch.append(byte)
                index += 1
            }
        }
    }

    private func utf8(_ range: Range<Int>) throws(Failure) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw failure("a string is not valid UTF-8", at: range.lowerBound)
        }
        return text
    }

    private mutating func escape(into scratch: inout [UInt8]) throws(Failure) {
        guard index + 1 < bytes.count else { throw failure("unterminated escape") }
        let letter = bytes[index + 1]
        index += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("a high surrogate without its low surrogate") }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw failure("a high surrogate without its low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw failure("a low surrogate without its high surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid \\u escape") }
            UTF8.encode(unicode) { scratch.append($0) }
        default:
            throw failure("an invalid escape '\\\(Unicode.Scalar(letter))'", at: index - 2)
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A number token, strictly as the JSON grammar has it.
    mutating func number() throws(Failure) -> JSONNode {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw failure("a number needs a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw failure("a number cannot have a leading zero") }
        } else {
            skipDigits()
        }
        var integral = true
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard let next = current, isDigit(next) else { throw failure("a digit must follow the decimal point") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let next = current, isDigit(next) else { throw failure("a digit must follow the exponent") }
            skipDigits()
        }
        let token = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if integral, let value = Self.integer(token) { return .integer(value) }
        guard let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else {
            throw failure("a number out of range", at: start)
        }
        return .double(value)
    }

    private static func integer(_ token: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = token.first == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in token.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflowA || overflowB { return nil }
            value = next
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }
}
