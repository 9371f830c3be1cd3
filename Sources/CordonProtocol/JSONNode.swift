/// A parsed JSON value, the intermediate form `VarlinkJSONDecoder` decodes from.
///
/// Objects keep their members in document order; the parser refuses a repeated name.
public enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// The value of member `key` when this is an object.
    public subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short name of the kind of value, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONNode

    public init(key: String, value: JSONNode) {
        self.key = key
        self.value = value
    }
}
