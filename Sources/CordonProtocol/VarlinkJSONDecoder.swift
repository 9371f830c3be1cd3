/// Decodes `Decodable` values from JSON without Foundation: the text is parsed once into a
/// `JSONNode` and the value decoded from that. Errors are `DecodingError`s with their coding
/// paths, as `JSONDecoder` throws them; a text that is not JSON throws `dataCorrupted` with the
/// parser's `JSONNodeParser.Failure` as the underlying error.
public struct VarlinkJSONDecoder: Sendable {
    public init() {}

    /// Decodes a `T` from a JSON text.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        let node: JSONNode
        do {
            node = try JSONNodeParser.parse(bytes)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [], debugDescription: "not valid JSON: \(error)", underlyingError: error))
        }
        return try decode(type, from: node)
    }

    /// Decodes a `T` from a parsed JSON value.
    public func decode<T: Decodable>(_ type: T.Type, from node: JSONNode) throws -> T {
        try T(from: NodeDecoder(node: node, path: nil))
    }
}

/// The `Decoder` over one `JSONNode`; it is its own single-value container.
struct NodeDecoder: Decoder, SingleValueDecodingContainer {
    let node: JSONNode
    let path: CodingPathNode?

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node else {
            throw mismatch([String: JSONNode].self, expected: "an object")
        }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(members: members, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = node else { throw mismatch([JSONNode].self, expected: "an array") }
        return UnkeyedNodeContainer(elements: elements, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func mismatch(_ type: Any.Type, expected: String) -> DecodingError {
        if case .null = node {
            return .valueNotFound(
                type,
                DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath, debugDescription: "expected \(expected), found \(node.kindName)"))
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool {
        if case .null = node { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let value) = node else { throw mismatch(type, expected: "a boolean") }
        return value
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let value) = node else { throw mismatch(type, expected: "a string") }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch node {
        case .double(let value): return value
        case .integer(let value): return Double(value)
        default: throw mismatch(type, expected: "a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let value = Float(try decode(Double.self))
        guard value.isFinite else { throw mismatch(type, expected: "a number that fits a Float") }
        return value
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: self) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch node {
        case .integer(let value):
            if let exact = T(exactly: value) { return exact }
        case .double(let value):
            if let exact = T(exactly: value) { return exact }
        default:
            throw mismatch(type, expected: "a number")
        }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: codingPath, debugDescription: "the number does not fit \(T.self)"))
    }
}
