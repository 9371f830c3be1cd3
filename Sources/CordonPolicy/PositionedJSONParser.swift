/// A small, strict JSON parser (RFC 8259) that records each value's line, column and JSON pointer.
///
/// Strict: no comments, trailing commas, single quotes, `NaN`, byte order mark, lone surrogates
/// or ill-formed UTF-8; duplicate keys are an error. Bounded: the input size and the nesting depth
/// are limited, so any input, however hostile, gets a result or an error, never a crash.
public struct PositionedJSONParser: Sendable {
    /// How much a document may ask of the parser.
    public struct Limits: Sendable, Hashable {
        /// Most nested objects and arrays; the top-level container is depth 1.
        public var maxDepth: Int
        /// Most bytes of input.
        public var maxBytes: Int

        /// Limits; the defaults are 64 levels and 1 MiB.
        public init(maxDepth: Int = 64, maxBytes: Int = 1 << 20) {
            self.maxDepth = maxDepth
            self.maxBytes = maxBytes
        }
    }

    let bytes: [UInt8]
    let limits: Limits
    var index = 0
    var line = 1
    var column = 1

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses UTF-8 `bytes` as one JSON document.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) -> Result<PositionedJSON, PositionedJSONError>
    {
        guard bytes.count <= limits.maxBytes else {
            let message = "the document is \(bytes.count) bytes; at most \(limits.maxBytes) bytes are allowed"
            return .failure(PositionedJSONError(kind: .tooLarge, line: 1, column: 1, pointer: "", message: message))
        }
        var parser = PositionedJSONParser(bytes: bytes, limits: limits)
        do {
            let value = try parser.parseDocument()
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    /// Parses `text` as one JSON document.
    public static func parse(_ text: String, limits: Limits = Limits()) -> Result<PositionedJSON, PositionedJSONError> {
        parse(Array(text.utf8), limits: limits)
    }

    private mutating func parseDocument() throws(PositionedJSONError) -> PositionedJSON {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw failure(.byteOrderMark, "a byte order mark is not allowed; save the file as UTF-8 without BOM", .root)
        }
        skipWhitespace()
        let value = try parseValue(path: .root, depth: 0)
        skipWhitespace()
        guard index == bytes.count else {
            throw failure(
                .trailingContent,
                "expected the end of the document after the top-level value, got \(currentDescription)", .root)
        }
        return value
    }

    /// A value starting at the current character; `depth` counts the enclosing containers.
    mutating func parseValue(path: PositionedJSON.Path, depth: Int) throws(PositionedJSONError) -> PositionedJSON {
        let (startLine, startColumn) = (line, column)
        guard let byte = peek() else {
            throw failure(.unexpectedEnd, "expected a value, got the end of the document", path)
        }
        let value: PositionedJSON.Value
        switch byte {
        case UInt8(ascii: "{"): value = try parseObject(path: path, depth: depth + 1)
        case UInt8(ascii: "["): value = try parseArray(path: path, depth: depth + 1)
        case UInt8(ascii: "\""): value = .string(try parseString(path: path))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            value = .number(try parseNumber(path: path))
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            value = try parseLiteral(path: path)
        default:
            throw failure(.unexpectedCharacter, "expected a value, got \(currentDescription)", path)
        }
        return PositionedJSON(value: value, line: startLine, column: startColumn, path: path)
    }

    private mutating func parseObject(path: PositionedJSON.Path, depth: Int) throws(PositionedJSONError)
        -> PositionedJSON.Value
    {
        try checkDepth(depth, path: path)
        advance()
        skipWhitespace()
        var members: [PositionedJSON.Member] = []
        var firstSeen: [String: (line: Int, column: Int)] = [:]
        if peek() == UInt8(ascii: "}") {
            advance()
            return .object(members)
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else {
                if members.isEmpty {
                    throw failure(
                        .unexpectedCharacter, "expected a string key or '}', got \(currentDescription)", path)
                }
                let trailing = peek() == UInt8(ascii: "}") ? " (trailing commas are not allowed)" : ""
                throw failure(
                    .unexpectedCharacter, "expected a string key after ',', got \(currentDescription)\(trailing)",
                    path)
            }
            let (keyLine, keyColumn) = (line, column)
            let key = try parseString(path: path)
            let memberPath = path.appending(key)
            if let first = firstSeen[key] {
                throw PositionedJSONError(
                    kind: .duplicateKey, line: keyLine, column: keyColumn, pointer: memberPath.pointer,
                    message:
                        "duplicate key \(PositionedJSON.quoted(key)) (first at line \(first.line), column \(first.column))"
                )
            }
            firstSeen[key] = (keyLine, keyColumn)
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw failure(
                    .unexpectedCharacter,
                    "expected ':' after the key \(PositionedJSON.quoted(key)), got \(currentDescription)",
                    memberPath)
            }
            advance()
            skipWhitespace()
            let value = try parseValue(path: memberPath, depth: depth)
            members.append(PositionedJSON.Member(key: key, keyLine: keyLine, keyColumn: keyColumn, value: value))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                advance()
                skipWhitespace()
            case UInt8(ascii: "}"):
                advance()
                return .object(members)
            default:
                throw failure(
                    .unexpectedCharacter, "expected ',' or '}' after a member, got \(currentDescription)", path)
            }
        }
    }

    private mutating func parseArray(path: PositionedJSON.Path, depth: Int) throws(PositionedJSONError)
        -> PositionedJSON.Value
    {
        try checkDepth(depth, path: path)
        advance()
        skipWhitespace()
        var elements: [PositionedJSON] = []
        if peek() == UInt8(ascii: "]") {
            advance()
            return .array(elements)
        }
        while true {
            if !elements.isEmpty, peek() == UInt8(ascii: "]") {
                throw failure(
                    .unexpectedCharacter, "expected a value after ',', got ']' (trailing commas are not allowed)",
                    path)
            }
            elements.append(
                try parseValue(path: path.appending(elements.count), depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                advance()
                skipWhitespace()
            case UInt8(ascii: "]"):
                advance()
                return .array(elements)
            default:
                throw failure(
                    .unexpectedCharacter, "expected ',' or ']' after an array element, got \(currentDescription)",
                    path)
            }
        }
    }

    private func checkDepth(_ depth: Int, path: PositionedJSON.Path) throws(PositionedJSONError) {
        guard depth <= limits.maxDepth else {
            throw failure(.tooDeep, "objects and arrays are nested deeper than \(limits.maxDepth) levels", path)
        }
    }
}
