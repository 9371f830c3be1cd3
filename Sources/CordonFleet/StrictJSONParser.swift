import CordonProtocol

/// A strict JSON reader (RFC 8259) for untrusted metadata: bytes to `JSONValue` in one pass, a
/// duplicate member refused (two readers must never see different documents), nesting bounded,
/// numbers kept exact (integers as `.int`; anything with a fraction or exponent as `.double`, which
/// canonical JSON then refuses). Faster than `JSONDecoder` into an enum, which tries each type in
/// turn and throws for every miss.
struct StrictJSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int

    /// Why the bytes are not one JSON value, and at which byte.
    struct Failure: Error {
        var offset: Int
        var reason: String
    }

    static func parse(_ bytes: [UInt8], maximumDepth: Int = 64) throws(Failure) -> JSONValue {
        var parser = StrictJSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw Failure(offset: parser.index, reason: "data after the value") }
        return value
    }

    private init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private mutating func skipSpace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09
        {
            index += 1
        }
    }

    private func fail(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw fail("a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected byte \(bytes[index])")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw fail("not \(word)")
        }
        index += expected.count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nested deeper than \(maximumDepth)") }
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("a member name was expected")
            }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("':' was expected") }
            index += 1
            skipSpace()
            let member = try value(depth: depth)
            guard members.updateValue(member, forKey: key) == nil else {
                throw fail("the member \"\(key)\" appears twice")
            }
            skipSpace()
            guard index < bytes.count else { throw fail("the object is not closed") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw fail("',' or '}' was expected") }
            index += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nested deeper than \(maximumDepth)") }
        index += 1
        var elements: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipSpace()
            elements.append(try value(depth: depth))
            skipSpace()
            guard index < bytes.count else { throw fail("the array is not closed") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw fail("',' or ']' was expected") }
            index += 1
            return .array(elements)
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escape, valid UTF-8.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw fail("a control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("the string is not closed") }
        var out = Array(bytes[start..<index])
        while bytes[index] == UInt8(ascii: "\\") {
            index += 1
            guard index < bytes.count else { throw fail("a truncated escape") }
            switch bytes[index] {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5c)
            case UInt8(ascii: "/"): out.append(0x2f)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xd800..<0xdc00).contains(scalar) {
                    guard index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"),
                        bytes[index + 2] == UInt8(ascii: "u")
                    else { throw fail("a lone surrogate") }
                    index += 2
                    let low = try hex4()
                    guard (0xdc00..<0xe000).contains(low) else { throw fail("a lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                } else if (0xdc00..<0xe000).contains(scalar) {
                    throw fail("a lone surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("not a Unicode scalar") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw fail("an unknown escape")
            }
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                guard bytes[index] >= 0x20 else { throw fail("a control character in a string") }
                out.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw fail("the string is not closed") }
        }
        index += 1
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
        return text
    }

    /// The four hex digits after `\u` (index on the `u`; left on the last digit).
    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 < bytes.count else { throw fail("a truncated \\u escape") }
        var value: UInt32 = 0
        for offset in 1...4 {
            let byte = bytes[index + offset]
            let digit: UInt32
            switch byte {
            case 48...57: digit = UInt32(byte - 48)
            case 97...102: digit = UInt32(byte - 87)
            case 65...70: digit = UInt32(byte - 55)
            default: throw fail("a bad \\u escape")
            }
            value = value << 4 | digit
        }
        index += 4
        return value
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (48...57).contains(bytes[index]) else { throw fail("a digit was expected") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, (48...57).contains(bytes[index]) else { throw fail("a digit was expected") }
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, (48...57).contains(bytes[index]) else { throw fail("a digit was expected") }
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw fail("a number out of range") }
        return .double(value)
    }
}
