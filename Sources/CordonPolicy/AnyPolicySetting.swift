/// A declared setting with its value types erased: what the code that walks every setting (the
/// parser, merge, fallback, explanation, schema) needs of a ``PolicySetting``.
protocol AnyPolicySetting: Sendable {
    var section: PolicySection { get }
    var key: String { get }
    var scope: SettingScope { get }
    var summary: String { get }
    var name: String { get }
    var pointer: String { get }
    var userRefusal: String? { get }
    /// Whether every file's value contributes (lists), rather than the stricter one winning.
    var isCombined: Bool { get }
    /// The value at `json`, every problem reported to `validator`; nil when invalid.
    func parse(_ json: PositionedJSON, with validator: PolicyParser.Validator) -> (any PolicyValue)?
    /// One file's value at `rule`, ready to merge; nil when `parsed` is not this setting's type.
    func resolved(_ parsed: any PolicyValue, at rule: RuleReference) -> AnyResolvedSetting?
    /// The join of two files' resolved values (most restrictive wins).
    func merged(_ lhs: AnyResolvedSetting, _ rhs: AnyResolvedSetting) -> AnyResolvedSetting
    /// The explanation step of the resolved value (the loosest value when nil: no file sets it).
    func step(_ resolved: AnyResolvedSetting?) -> ExplanationStep
    /// The JSON Schema of the key, with its description and default.
    var schema: SchemaJSON { get }
    /// The built-in default, as a file writes it; nil when the default leaves the key out.
    var builtinValue: (any PolicyValue)? { get }
    /// For an integer setting: its range.
    var integerRange: ClosedRange<Int>? { get }
    /// For a choice: its spellings.
    var spellings: [String]? { get }
    /// Whether two values a file may write are equal.
    func isEqual(_ lhs: any PolicyValue, _ rhs: any PolicyValue) -> Bool
}

extension PolicySetting: AnyPolicySetting {
    var isCombined: Bool { merge.isCombined }

    func parse(_ json: PositionedJSON, with validator: PolicyParser.Validator) -> (any PolicyValue)? {
        syntax.parse(json, validator)
    }

    func resolved(_ parsed: any PolicyValue, at rule: RuleReference) -> AnyResolvedSetting? {
        guard let parsed = parsed as? Parsed else { return nil }
        return AnyResolvedSetting(ResolvedSetting(resolve(parsed), at: rule))
    }

    func merged(_ lhs: AnyResolvedSetting, _ rhs: AnyResolvedSetting) -> AnyResolvedSetting {
        guard let left = lhs.base as? ResolvedSetting<Value> else { return rhs }
        guard let right = rhs.base as? ResolvedSetting<Value> else { return lhs }
        return AnyResolvedSetting(join(left, right))
    }

    /// The join of two resolved values by this setting's rule.
    func join(_ lhs: ResolvedSetting<Value>, _ rhs: ResolvedSetting<Value>) -> ResolvedSetting<Value> {
        switch merge {
        case .stricter(let isStricter): return lhs.keepingStricter(rhs, isStricter: isStricter)
        case .combine(let combine): return lhs.combining(rhs, with: combine)
        }
    }

    func step(_ resolved: AnyResolvedSetting?) -> ExplanationStep {
        let setting = (resolved?.base as? ResolvedSetting<Value>) ?? ResolvedSetting(unset: unset)
        return setting.step(name, combined: isCombined)
    }

    var schema: SchemaJSON {
        guard case .object(let members) = syntax.schema else { return syntax.schema }
        var described: [(String, SchemaJSON)] = [("description", .string(summary))]
        described += members
        if let builtin { described.append(("default", .raw(builtin.policyJSON))) }
        return .object(described)
    }

    var builtinValue: (any PolicyValue)? { builtin }

    var integerRange: ClosedRange<Int>? { syntax.range }

    var spellings: [String]? { syntax.spellings }

    func isEqual(_ lhs: any PolicyValue, _ rhs: any PolicyValue) -> Bool {
        guard let left = lhs as? Parsed, let right = rhs as? Parsed else { return false }
        return left == right
    }
}

/// A ``ResolvedSetting`` of any value type, comparable and hashable, as the effective policy stores it.
@usableFromInline struct AnyResolvedSetting: Sendable, Hashable {
    @usableFromInline let base: any ErasedResolvedSetting

    init(_ base: some ErasedResolvedSetting) { self.base = base }

    @usableFromInline static func == (lhs: Self, rhs: Self) -> Bool { lhs.base.isEqual(to: rhs.base) }

    @usableFromInline func hash(into hasher: inout Hasher) { base.hash(into: &hasher) }
}

/// What ``AnyResolvedSetting`` needs of the setting it wraps.
@usableFromInline protocol ErasedResolvedSetting: Sendable {
    /// Whether `other` is the same type and equal.
    func isEqual(to other: any ErasedResolvedSetting) -> Bool
    func hash(into hasher: inout Hasher)
    /// Whether any file sets it.
    var isSet: Bool { get }
}

extension ResolvedSetting: ErasedResolvedSetting {
    @usableFromInline func isEqual(to other: any ErasedResolvedSetting) -> Bool { (other as? Self) == self }
}
