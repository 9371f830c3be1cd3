/// What a file may write for one setting: how the parser reads it (with its messages) and how the
/// JSON Schema states it. One value of this type drives both, so they cannot disagree.
struct ValueSyntax<Parsed: PolicyValue>: Sendable {
    /// Reads the value at `json`, reporting every problem to the validator; nil when invalid.
    let parse: @Sendable (PositionedJSON, PolicyParser.Validator) -> Parsed?
    /// The JSON Schema of the value (without its description).
    let schema: SchemaJSON
    /// For an integer: its range.
    var range: ClosedRange<Int>?
    /// For a choice: its spellings, in the order messages list them.
    var spellings: [String]?
}

extension ValueSyntax where Parsed == Int {
    /// An integer within `range` (both ends included).
    static func integer(_ range: ClosedRange<Int>) -> Self {
        Self(
            parse: { json, validator in validator.integer(json, in: range) },
            schema: .object([
                ("type", "integer"), ("minimum", .integer(range.lowerBound)), ("maximum", .integer(range.upperBound)),
            ]), range: range)
    }
}

extension ValueSyntax where Parsed == Bool {
    /// `true` or `false`.
    static var boolean: Self {
        Self(parse: { json, validator in validator.bool(json) }, schema: .object([("type", "boolean")]))
    }
}

extension ValueSyntax where Parsed: RawRepresentable<String> {
    /// One of `choices`, spelled as its raw value; messages and the schema list them in this order.
    static func choice(_ choices: [Parsed]) -> Self {
        Self(
            parse: { json, validator in validator.choice(json, choices) },
            schema: .object([("enum", .array(choices.map { .string($0.rawValue) }))]),
            spellings: choices.map(\.rawValue))
    }
}

extension ValueSyntax where Parsed == [String] {
    /// A list of reverse-DNS app ids.
    static var appIds: Self {
        Self(
            parse: { json, validator in validator.appIds(json) },
            schema: .object([("type", "array"), ("items", .reference("appId"))]))
    }

    /// A list of strings that `pattern` describes; `noun` names them in messages ("globs"),
    /// `item` describes one for the schema.
    static func strings(_ pattern: StringPattern, noun: String, item: String) -> Self {
        Self(
            parse: { json, validator in
                validator.list(json, of: noun) { element in
                    validator.string(element, expected: pattern.expected, where: pattern.accepts)
                }
            },
            schema: .object([("type", "array"), ("items", pattern.schema(description: item))]))
    }
}

/// A rule for strings: what a message says was expected, the check, and how the schema states it.
struct StringPattern: Sendable {
    /// "an absolute path (starting with '/')".
    let expected: String
    /// The check the parser applies.
    let accepts: @Sendable (String) -> Bool
    /// The ECMA 262 pattern the schema states; nil for "any non-empty string".
    let regex: String?

    /// The schema of one string, with `description`.
    func schema(description: String) -> SchemaJSON {
        var members: [(String, SchemaJSON)] = [("description", .string(description)), ("type", "string")]
        members.append(regex.map { ("pattern", .string($0)) } ?? ("minLength", .integer(1)))
        return .object(members)
    }
}
