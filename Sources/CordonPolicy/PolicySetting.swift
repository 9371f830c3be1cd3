/// One policy setting, declared once: its section and key, what a file may write there, how
/// several files' values merge, where it applies, its loosest value, the built-in default and the
/// sentence that describes it.
///
/// Every key of schema `cordon.policy.v1` is one `PolicySetting` in ``PolicyKeys`` (docs/ARCHITECTURE.md,
/// "Policy settings"). The parser, its messages, the merge, the fallback to the built-in default,
/// `cordon policy show` and `explain`, the scope of override keys, the JSON Schema and
/// `policies/default.json` are all derived from those declarations.
///
/// `Parsed` is the value as a file writes it (a list of app ids); `Value` the value the merge works
/// on (a set, or nil for "no allow-list").
public struct PolicySetting<Parsed: PolicyValue, Value: PolicyValue>: Sendable {
    /// The section the key belongs to.
    public let section: PolicySection
    /// The key inside its section (`idleTimeoutSeconds`).
    public let key: String
    /// `section.key`, as `cordon policy explain` names the setting (kept: it is the key every read
    /// of the setting looks up).
    public let name: String
    /// Where the setting applies, and whether an override may set it.
    public let scope: SettingScope
    /// What the setting means, for the JSON Schema and `cordon policy schema`.
    public let summary: String
    /// What a file may write there.
    let syntax: ValueSyntax<Parsed>
    /// The value as the merge sees it.
    let resolve: @Sendable (Parsed) -> Value
    /// How several files' values merge (most restrictive wins).
    let merge: MergeRule<Value>
    /// The value when no file sets the key (the loosest: the identity of merging).
    @usableFromInline let unset: Value
    /// The built-in default (`policies/default.json`); nil leaves the key out (absent allow-lists).
    let builtin: Parsed?
    /// Set when user files may not write the key: the message they get.
    let userRefusal: String?

    /// A setting whose merged value is the value a file writes.
    init(
        _ section: PolicySection, _ key: String, scope: SettingScope, _ syntax: ValueSyntax<Parsed>,
        merge: MergeRule<Value>, unset: Value, builtin: Parsed?, userRefusal: String? = nil, summary: String
    ) where Parsed == Value {
        self.init(
            section, key, scope: scope, syntax, resolve: { $0 }, merge: merge, unset: unset, builtin: builtin,
            userRefusal: userRefusal, summary: summary)
    }

    /// A setting whose merged value is derived from what a file writes by `resolve`.
    init(
        _ section: PolicySection, _ key: String, scope: SettingScope, _ syntax: ValueSyntax<Parsed>,
        resolve: @escaping @Sendable (Parsed) -> Value, merge: MergeRule<Value>, unset: Value, builtin: Parsed?,
        userRefusal: String? = nil, summary: String
    ) {
        self.section = section
        self.key = key
        name = section.name + "." + key
        self.scope = scope
        self.summary = summary
        self.syntax = syntax
        self.resolve = resolve
        self.merge = merge
        self.unset = unset
        self.builtin = builtin
        self.userRefusal = userRefusal
    }

    /// `/section/key`, the JSON pointer of the key in a document (below an override's pointer there).
    public var pointer: String { "/" + section.name + "/" + key }

    /// One file's value for this setting, for building documents in code:
    /// `PolicyDocument(PolicyKeys.Lock.idleTimeoutSeconds(60))`.
    public func callAsFunction(_ value: Parsed) -> PolicySettingEntry {
        PolicySettingEntry(name: name, value: value)
    }

    /// One file's value for this setting when there is one; nil (leaving the setting unset) otherwise.
    public func callAsFunction(ifSet value: Parsed?) -> PolicySettingEntry? {
        value.map { PolicySettingEntry(name: name, value: $0) }
    }
}

/// Where a setting applies (docs/ARCHITECTURE.md, "Policy settings").
public enum SettingScope: String, Sendable, CaseIterable {
    /// The whole container, from the base of a file only: an override may not set it (`passcode`, `apps`).
    case global
    /// The app an override names (`pasteboard.copyOut`, `lock.ackDeadlineMs`).
    case perApp
    /// The one container every app shares; an override that sets it governs the container while
    /// the app it names is registered, the most restrictive across the registered apps
    /// (`lock.idleTimeoutSeconds`).
    case container
}

/// A section of a policy document: its key and what it is for.
public struct PolicySection: Sendable, Hashable {
    /// The section's key in a document (`lock`).
    public let name: String
    /// What the section is for, in a few words (the schema's description of the key).
    public let brief: String
    /// What the section holds, for the JSON Schema's definition of it.
    public let summary: String
    /// Set when an override may not hold the section at all: why not.
    let perAppRefusal: String?

    init(_ name: String, brief: String, summary: String, perAppRefusal: String? = nil) {
        self.name = name
        self.brief = brief
        self.summary = summary
        self.perAppRefusal = perAppRefusal
    }
}

/// How the values of several files for one setting combine.
enum MergeRule<Value: PolicyValue>: Sendable {
    /// The stricter value wins; the closure is a strict total order ("left is stricter than right").
    case stricter(@Sendable (Value, Value) -> Bool)
    /// The values combine (allow-lists intersect, block-lists unite); every file contributes.
    case combine(@Sendable (Value, Value) -> Value)

    /// Whether every file's value contributes to the result (lists).
    var isCombined: Bool {
        if case .combine = self { return true }
        return false
    }
}

/// One file's value for one setting, type-erased (built with ``PolicySetting/callAsFunction(_:)``).
public struct PolicySettingEntry: Sendable {
    /// The setting's `section.key`.
    public let name: String
    /// The value as a file writes it.
    public let value: any PolicyValue
}
