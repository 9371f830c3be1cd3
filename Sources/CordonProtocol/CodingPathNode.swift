/// A coding path as a shared linked list: extending it costs one small object, and the array
/// `Decoder.codingPath` wants is built only when someone asks (an error, a custom decoder).
final class CodingPathNode: Sendable {
    let key: any CodingKey & Sendable
    let parent: CodingPathNode?

    init(key: any CodingKey & Sendable, parent: CodingPathNode?) {
        self.key = key
        self.parent = parent
    }

    /// The path from the root to this node.
    static func path(_ node: CodingPathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while let next = current {
            keys.append(next.key)
            current = next.parent
        }
        return keys.reversed()
    }

    /// `node` extended by `key`.
    static func appending(_ key: some CodingKey, to node: CodingPathNode?) -> CodingPathNode {
        CodingPathNode(key: PlainCodingKey(key), parent: node)
    }
}

/// A coding key by value: a string, and an index for array elements.
struct PlainCodingKey: CodingKey, Sendable {
    var stringValue: String
    var intValue: Int?

    init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        self.init(index: intValue)
    }
}
