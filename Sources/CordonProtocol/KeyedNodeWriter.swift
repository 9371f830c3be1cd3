/// The keyed container writing one JSON object; `level` is its depth plus one.
struct KeyedNodeWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let level: Int
    let path: CodingPathNode?

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }

    private func member(_ key: Key) throws {
        try output.beginMember(key.stringValue, level: level)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try member(key)
        output.writeNull()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try member(key)
        output.write(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try member(key)
        output.write(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try member(key)
        try output.write(value, path: CodingPathNode.path(CodingPathNode.appending(key, to: path)))
    }

    mutating func encode(_ value: Float, forKey key: Key) throws { try encode(Double(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key)
        try NodeEncoder.encode(value, output: output, depth: level, path: CodingPathNode.appending(key, to: path))
    }

    private func integer(_ value: some FixedWidthInteger, _ key: Key) throws {
        try member(key)
        output.write(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        try? member(key)
        return NodeEncoder(output: output, depth: level, path: CodingPathNode.appending(key, to: path))
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        try? member(key)
        return NodeEncoder(output: output, depth: level, path: CodingPathNode.appending(key, to: path))
            .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        try? output.beginMember("super", level: level)
        return NodeEncoder(output: output, depth: level, path: path)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        try? member(key)
        return NodeEncoder(output: output, depth: level, path: CodingPathNode.appending(key, to: path))
    }
}
