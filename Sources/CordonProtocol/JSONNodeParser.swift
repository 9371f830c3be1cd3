/// A strict RFC 8259 parser from bytes to `JSONNode`: one pass, no Foundation, bounded depth.
public struct JSONNodeParser {
    /// Why a text is not JSON, and the byte offset where that was found.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var offset: Int
        public var reason: String

        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 256

    /// Parses one JSON text (surrounding whitespace allowed, nothing else).
    public static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONNode {
        let result: Result<JSONNode, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(Failure) in try parse(buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(Failure) in try parse(buffer) }
    }

    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONNode {
        var parser = JSONNodeParser(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func failure(_ reason: String, at offset: Int? = nil) -> Failure {
        Failure(offset: offset ?? index, reason: reason)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONNode {
        guard let byte = current else { throw failure("expected a value, found the end") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character '\(Unicode.Scalar(byte))', expected a value")
        }
    }

    private mutating func literal(_ word: StaticString, _ node: JSONNode) throws(Failure) -> JSONNode {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("expected '\(word)'") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw failure("expected '\(word)'")
        }
        index += count
        return node
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        var seen: Set<String> = []
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                if current == UInt8(ascii: "}") { throw failure("a trailing comma before '}'") }
                throw failure("expected a member name in quotes")
            }
            let keyStart = index
            let key = try string()
            // Parsers disagree on which of two equal names wins; the agent takes neither.
            if members.count < 8 ? members.contains(where: { $0.key == key }) : !seen.insert(key).inserted {
                throw failure("the member name \"\(key.prefix(64))\" appears twice in an object", at: keyStart)
            }
            if members.count == 7 { seen = Set(members.map(\.key) + [key]) }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try value(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONNode {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "]") { throw failure("a trailing comma before ']'") }
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("expected ',' or ']' in an array")
            }
        }
    }
}
