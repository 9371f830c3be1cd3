/// A JSON value together with where it stands in its text: 1-based line and column, and its
/// JSON pointer (RFC 6901), so every message about it can point at it precisely.
public struct PositionedJSON: Sendable, Hashable {
    /// The value itself; containers hold positioned children.
    public enum Value: Sendable, Hashable {
        case null
        case bool(Bool)
        case number(Number)
        case string(String)
        case array([PositionedJSON])
        /// Members in document order; keys are unique (the parser rejects duplicates).
        case object([Member])
    }

    /// One member of an object: its key, where the key starts, and its value.
    public struct Member: Sendable, Hashable {
        /// The key, unescaped.
        public var key: String
        /// 1-based line of the key's opening quote.
        public var keyLine: Int
        /// 1-based column (in Unicode scalars) of the key's opening quote.
        public var keyColumn: Int
        /// The member's value.
        public var value: PositionedJSON

        /// A member from its parts.
        public init(key: String, keyLine: Int, keyColumn: Int, value: PositionedJSON) {
            self.key = key
            self.keyLine = keyLine
            self.keyColumn = keyColumn
            self.value = value
        }
    }

    /// The value itself.
    public var value: Value
    /// 1-based line of the value's first character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the value's first character.
    public var column: Int
    /// Where the value sits: the reference tokens from the root, shared with the parent's.
    public var path: Path

    /// A positioned value from its parts.
    public init(value: Value, line: Int, column: Int, path: Path) {
        self.value = value
        self.line = line
        self.column = column
        self.path = path
    }

    /// The value's JSON pointer: "" for the root, `/a/0/b~1c` for `{"a": [{"b/c": …}]}`.
    public var pointer: String { path.pointer }

    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> PositionedJSON? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The element at `index`, when this is an array that long.
    public subscript(index: Int) -> PositionedJSON? {
        guard case .array(let elements) = value, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The value that `pointer` (RFC 6901, e.g. `/overrides/0/apps`) names, if there is one.
    public func value(at pointer: String) -> PositionedJSON? {
        guard !pointer.isEmpty else { return self }
        // Split by Unicode scalars, not characters: a key may begin with a combining mark, which
        // would otherwise join the "/" before it into one character.
        let scalars = pointer.unicodeScalars
        guard scalars.first == "/" else { return nil }
        var current = self
        for token in scalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let key = Self.unescapePointerToken(String(String.UnicodeScalarView(token)))
            switch current.value {
            case .object:
                guard let next = current[key] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Self.arrayIndex(key), index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// What kind of value this is, with an article: "an object", "a string", "null", ….
    public var kindDescription: String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// A token as an array index: decimal digits without leading zeros.
    private static func arrayIndex(_ token: String) -> Int? {
        guard let first = token.first, first != "0" || token.count == 1 else { return nil }
        guard token.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(token)
    }
}
