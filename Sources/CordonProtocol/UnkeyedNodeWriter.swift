/// The unkeyed container writing one JSON array; `level` is its depth plus one.
struct UnkeyedNodeWriter: UnkeyedEncodingContainer {
    let output: JSONOutput
    let level: Int
    let path: CodingPathNode?
    private(set) var count = 0

    init(output: JSONOutput, level: Int, path: CodingPathNode?) {
        self.output = output
        self.level = level
        self.path = path
    }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }

    private mutating func element() throws {
        try output.beginElement(level: level)
        count += 1
    }

    private var elementPath: CodingPathNode {
        CodingPathNode.appending(PlainCodingKey(index: count - 1), to: path)
    }

    mutating func encodeNil() throws {
        try element()
        output.writeNull()
    }

    mutating func encode(_ value: Bool) throws {
        try element()
        output.write(value)
    }

    mutating func encode(_ value: String) throws {
        try element()
        output.write(value)
    }

    mutating func encode(_ value: Double) throws {
        try element()
        try output.write(value, path: CodingPathNode.path(elementPath))
    }

    mutating func encode(_ value: Float) throws { try encode(Double(value)) }
    mutating func encode(_ value: Int) throws { try integer(value) }
    mutating func encode(_ value: Int8) throws { try integer(value) }
    mutating func encode(_ value: Int16) throws { try integer(value) }
    mutating func encode(_ value: Int32) throws { try integer(value) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try integer(value) }
    mutating func encode(_ value: UInt8) throws { try integer(value) }
    mutating func encode(_ value: UInt16) throws { try integer(value) }
    mutating func encode(_ value: UInt32) throws { try integer(value) }
    mutating func encode(_ value: UInt64) throws { try integer(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try element()
        try NodeEncoder.encode(value, output: output, depth: level, path: elementPath)
    }

    private mutating func integer(_ value: some FixedWidthInteger) throws {
        try element()
        output.write(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        try? element()
        return NodeEncoder(output: output, depth: level, path: elementPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        try? element()
        return NodeEncoder(output: output, depth: level, path: elementPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        try? element()
        return NodeEncoder(output: output, depth: level, path: elementPath)
    }
}
