/// Why a text is not acceptable JSON: where (1-based line and column, and the JSON pointer of the
/// value being read) and what was expected there.
public struct PositionedJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What class of problem this is; stable names for tests and tools.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A character that cannot start or continue the current construct.
        case unexpectedCharacter
        /// The text ends in the middle of a value.
        case unexpectedEnd
        /// A string without its closing quote (or broken by a line break).
        case unterminatedString
        /// A backslash escape that JSON does not define, or a malformed `\u` escape.
        case invalidEscape
        /// A raw control character (U+0000–U+001F) inside a string.
        case controlCharacter
        /// Bytes that are not well-formed UTF-8.
        case invalidUTF8
        /// A malformed number (leading zeros, missing digits).
        case invalidNumber
        /// A bare word other than `true`, `false` and `null`.
        case invalidLiteral
        /// The same key twice in one object.
        case duplicateKey
        /// Objects and arrays nested deeper than the limit.
        case tooDeep
        /// A document larger than the limit.
        case tooLarge
        /// Anything after the top-level value.
        case trailingContent
        /// A byte order mark at the start (RFC 8259 §8.1: not to be added).
        case byteOrderMark
    }

    /// The class of problem.
    public var kind: Kind
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the offending character.
    public var column: Int
    /// The JSON pointer of the value being read when the problem was found.
    public var pointer: String
    /// What is wrong and what was expected, e.g. `expected ',' or '}' after a member, got '"'`.
    public var message: String

    /// An error from its parts.
    public init(kind: Kind, line: Int, column: Int, pointer: String, message: String) {
        self.kind = kind
        self.line = line
        self.column = column
        self.pointer = pointer
        self.message = message
    }

    /// `LINE:COLUMN: MESSAGE`.
    public var description: String { "\(line):\(column): \(message)" }
}

extension PositionedJSON {
    /// `text` as a JSON string literal for messages: quoted, escaped, and cut at `limit`
    /// characters (with "…") so a huge value cannot flood a log line.
    public static func quoted(_ text: String, limit: Int = 64) -> String {
        var result = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            count += 1
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += "\\u" + hex(scalar.value, width: 4)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// The value as shown after "got" in a message: strings quoted, numbers and literals as
    /// written, containers by kind ("an array", "an object").
    public var shortDescription: String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return number.text.count > 40 ? String(number.text.prefix(40)) + "…" : number.text
        case .string(let text): return Self.quoted(text)
        case .array(let elements): return elements.isEmpty ? "an empty array" : "an array"
        case .object: return "an object"
        }
    }

    /// Upper-case hexadecimal, zero-padded to `width` digits.
    static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
