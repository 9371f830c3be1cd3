/// A value a setting can take, printable for `cordon policy show` and `explain`.
public protocol PolicyValue: Sendable, Hashable {
    /// The value as a policy file would spell it (strings quoted, lists sorted).
    var policyDescription: String { get }
    /// How an absent bound of this type prints when it wraps an optional (`unlimited`, `unrestricted`).
    static var unboundedDescription: String { get }
    /// The value as JSON text, as it would stand in a policy file (`null` for an absent bound).
    var policyJSON: String { get }
}

extension PolicyValue {
    /// Most values print as JSON already.
    public var policyJSON: String { policyDescription }
}

/// One document's value for a setting: the rule (file + pointer) and the value it sets.
public struct SettingCandidate<Value: PolicyValue>: Sendable, Hashable {
    /// Where the value is set.
    public var rule: RuleReference
    /// The value set there (lists normalized as the merge sees them).
    public var value: Value

    /// A candidate value set by `rule`.
    public init(rule: RuleReference, value: Value) {
        self.rule = rule
        self.value = value
    }

    /// Canonical order: by rule, then by printed value (so merges do not depend on document order).
    static func precedes(_ lhs: Self, _ rhs: Self) -> Bool {
        if lhs.rule != rhs.rule { return lhs.rule < rhs.rule }
        return lhs.value.policyDescription < rhs.value.policyDescription
    }
}

/// One merged setting: its effective value, the rules whose value won, and every document's value.
///
/// Merging is a join: commutative, associative and idempotent. An unset setting (no document
/// sets it) is the identity and resolves to the setting's documented loosest value.
public struct ResolvedSetting<Value: PolicyValue>: Sendable, Hashable {
    /// The effective value: the most restrictive set by any document, or the loosest default.
    public private(set) var value: Value
    /// The rules whose value won (all of them when several set the winning value), sorted.
    public private(set) var rules: [RuleReference]
    /// Every document's value for this setting, sorted by rule.
    public private(set) var candidates: [SettingCandidate<Value>]

    /// Whether any document sets this setting.
    public var isSet: Bool { !candidates.isEmpty }

    /// An unset setting that resolves to its loosest value `fallback`.
    @usableFromInline init(unset fallback: Value) {
        value = fallback
        rules = []
        candidates = []
    }

    /// The setting as one document sets it.
    init(_ value: Value, at rule: RuleReference) {
        self.value = value
        rules = [rule]
        candidates = [SettingCandidate(rule: rule, value: value)]
    }

    /// Joins two settings by keeping the stricter value; `isStricter` must be a strict total order.
    func keepingStricter(_ other: Self, isStricter: (Value, Value) -> Bool) -> Self {
        guard isSet else { return other }
        guard other.isSet else { return self }
        var result = self
        result.candidates = PolicyFormat.sortedUnion(candidates, other.candidates, by: SettingCandidate.precedes)
        if value == other.value {
            result.rules = PolicyFormat.sortedUnion(rules, other.rules, by: <)
        } else if isStricter(other.value, value) {
            result.value = other.value
            result.rules = other.rules
        }
        return result
    }

    /// Joins two settings whose values combine (lists intersect or unite): every document contributes.
    func combining(_ other: Self, with combine: (Value, Value) -> Value) -> Self {
        guard isSet else { return other }
        guard other.isSet else { return self }
        var result = self
        result.value = combine(value, other.value)
        result.rules = PolicyFormat.sortedUnion(rules, other.rules, by: <)
        result.candidates = PolicyFormat.sortedUnion(candidates, other.candidates, by: SettingCandidate.precedes)
        return result
    }

    /// This setting as an explanation step named `setting` (e.g. `pasteboard.copyOut`).
    ///
    /// - Parameter combined: the values combine (lists), so every candidate counts as a winner.
    func step(_ setting: String, combined: Bool) -> ExplanationStep {
        let shown = candidates.map { candidate in
            ExplanationCandidate(
                rule: candidate.rule, value: candidate.value.policyDescription,
                won: combined || candidate.value == value)
        }
        var step = ExplanationStep(setting: setting, value: value.policyDescription, rules: rules, candidates: shown)
        step.json = value.policyJSON
        return step
    }
}

extension PolicyFormat {
    /// The sorted, duplicate-free union of two sorted, duplicate-free arrays.
    static func sortedUnion<Element: Equatable>(
        _ lhs: [Element], _ rhs: [Element], by precedes: (Element, Element) -> Bool
    ) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(lhs.count + rhs.count)
        var left = lhs.startIndex
        var right = rhs.startIndex
        while left < lhs.endIndex, right < rhs.endIndex {
            let lhsElement = lhs[left]
            let rhsElement = rhs[right]
            if lhsElement == rhsElement {
                result.append(lhsElement)
                left += 1
                right += 1
            } else if precedes(lhsElement, rhsElement) {
                result.append(lhsElement)
                left += 1
            } else {
                result.append(rhsElement)
                right += 1
            }
        }
        result.append(contentsOf: lhs[left...])
        result.append(contentsOf: rhs[right...])
        return result
    }
}
