/// Encodes `Encodable` values as compact JSON without Foundation, straight into bytes: no
/// intermediate tree and no dynamic casts. Output matches `JSONEncoder` with
/// `.withoutEscapingSlashes` for the types varlink carries (integral doubles are written
/// without a fraction; non-finite numbers are an error).
public struct VarlinkJSONEncoder: Sendable {
    public init() {}

    /// The JSON text of `value`.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let output = JSONOutput(capacity: 256)
        try value.encode(to: NodeEncoder(output: output, depth: 0, path: nil))
        output.close(to: 0)
        if output.bytes.isEmpty { output.bytes = Array("{}".utf8) }
        return output.bytes
    }
}

/// The `Encoder` for one value, written at `depth` open containers; its own single-value container.
struct NodeEncoder: Encoder, SingleValueEncodingContainer {
    let output: JSONOutput
    let depth: Int
    let path: CodingPathNode?

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A second request for the container of the same value continues the open one.
        if output.depth <= depth {
            try? output.openContainer(at: depth, opener: UInt8(ascii: "{"), closer: UInt8(ascii: "}"))
        }
        return KeyedEncodingContainer(KeyedNodeWriter<Key>(output: output, level: depth + 1, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if output.depth <= depth {
            try? output.openContainer(at: depth, opener: UInt8(ascii: "["), closer: UInt8(ascii: "]"))
        }
        return UnkeyedNodeWriter(output: output, level: depth + 1, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// Encodes `value` as a member value at this depth; a value that wrote nothing becomes `{}`.
    static func encode(_ value: some Encodable, output: JSONOutput, depth: Int, path: CodingPathNode?) throws {
        let before = output.bytes.count
        try value.encode(to: NodeEncoder(output: output, depth: depth, path: path))
        output.close(to: depth)
        if output.bytes.count == before { output.bytes.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")]) }
    }

    // MARK: SingleValueEncodingContainer

    func encodeNil() throws {
        try output.resume(at: depth)
        output.writeNull()
    }

    func encode(_ value: Bool) throws {
        try output.resume(at: depth)
        output.write(value)
    }

    func encode(_ value: String) throws {
        try output.resume(at: depth)
        output.write(value)
    }

    func encode(_ value: Double) throws {
        try output.resume(at: depth)
        try output.write(value, path: codingPath)
    }

    func encode(_ value: Float) throws { try encode(Double(value)) }
    func encode(_ value: Int) throws { try integer(value) }
    func encode(_ value: Int8) throws { try integer(value) }
    func encode(_ value: Int16) throws { try integer(value) }
    func encode(_ value: Int32) throws { try integer(value) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try integer(value) }
    func encode(_ value: UInt8) throws { try integer(value) }
    func encode(_ value: UInt16) throws { try integer(value) }
    func encode(_ value: UInt32) throws { try integer(value) }
    func encode(_ value: UInt64) throws { try integer(value) }

    func encode<T: Encodable>(_ value: T) throws {
        try output.resume(at: depth)
        try Self.encode(value, output: output, depth: depth, path: path)
    }

    private func integer(_ value: some FixedWidthInteger) throws {
        try output.resume(at: depth)
        output.write(value)
    }
}
