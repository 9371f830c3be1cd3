/// A JSON value whose object members keep their order, printed the way the project's generated
/// files are (`policies/cordon.policy.v1.schema.json`, `policies/default.json`): two-space indent,
/// one member or element per line, `"key": value`.
public enum SchemaJSON: Sendable, Equatable, ExpressibleByStringLiteral {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case array([SchemaJSON])
    case object([(String, SchemaJSON)])
    /// A value given as JSON text already (a policy value's `policyJSON`), printed as it is.
    case raw(String)

    /// A string literal is a JSON string.
    public init(stringLiteral value: String) { self = .string(value) }

    /// `{"$ref": "#/$defs/NAME"}`.
    static func reference(_ name: String) -> SchemaJSON { .object([("$ref", .string("#/$defs/" + name))]) }

    /// The value printed with a two-space indent and a final line break.
    public var text: String {
        var output = ""
        write(to: &output, indent: "")
        return output + "\n"
    }

    private func write(to output: inout String, indent: String) {
        let inner = indent + "  "
        switch self {
        case .string(let text): output += PolicyFormat.quoted(text)
        case .integer(let number): output += String(number)
        case .bool(let flag): output += flag ? "true" : "false"
        case .raw(let json): output += json
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += inner
                element.write(to: &output, indent: inner)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += indent + "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            for (index, member) in members.enumerated() {
                output += inner + PolicyFormat.quoted(member.0) + ": "
                member.1.write(to: &output, indent: inner)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += indent + "}"
        }
    }

    public static func == (lhs: SchemaJSON, rhs: SchemaJSON) -> Bool { lhs.text == rhs.text }
}
