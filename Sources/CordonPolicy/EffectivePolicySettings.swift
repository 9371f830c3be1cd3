/// The effective value of every setting of one scope (the base, or one app's overrides), each
/// resolved with its provenance; an unset one holds its declared loosest value.
///
/// Read a setting by its declaration: `settings[PolicyKeys.Lock.idleTimeoutSeconds].value`.
public struct EffectivePolicySettings: Sendable, Hashable {
    /// The settings some document sets, by `section.key` (unset ones are absent).
    @usableFromInline var values: [String: AnyResolvedSetting] = [:]

    /// Nothing set: every setting at its loosest value (the identity of merging).
    public static let unset = EffectivePolicySettings()

    /// The effective value of `setting`, with the rules it came from.
    ///
    /// Inlinable: read per call on the data calls' path, it is then specialized for the setting's
    /// types where it is read, with no generic metadata looked up at run time (docs/PERFORMANCE.md,
    /// "Policy settings read without generic lookups").
    public internal(set) subscript<Parsed, Value>(_ setting: PolicySetting<Parsed, Value>) -> ResolvedSetting<Value> {
        @inlinable get {
            (values[setting.name]?.base as? ResolvedSetting<Value>) ?? ResolvedSetting(unset: setting.unset)
        }
        set { values[setting.name] = newValue.isSet ? AnyResolvedSetting(newValue) : nil }
    }

    /// Whether any document sets the setting `name` (`section.key`).
    func isSet(_ name: String) -> Bool { values[name] != nil }

    /// The settings one part of a document sets (its base, or one override), at the pointers
    /// `locator` names. `apps.managed` is not among them: ``EffectivePolicy`` keeps bindings per app.
    init(_ document: PolicySettingValues, at locator: RuleLocator) {
        for setting in PolicyKeys.all where setting.name != PolicyKeys.Apps.managed.name {
            guard let parsed = document[name: setting.name],
                let resolved = setting.resolved(parsed, at: locator(setting.pointer))
            else { continue }
            values[setting.name] = resolved
        }
    }

    /// Nothing set.
    init() {}

    /// The most restrictive of both, with the provenance of every winning value.
    public func merged(with other: EffectivePolicySettings) -> EffectivePolicySettings {
        var result = self
        for (name, theirs) in other.values {
            guard let ours = values[name], let setting = PolicyKeys.byName[name] else {
                result.values[name] = theirs
                continue
            }
            result.values[name] = setting.merged(ours, theirs)
        }
        return result
    }

    /// Replaces every unset setting with `defaults`' value.
    mutating func fillUnset(from defaults: EffectivePolicySettings) {
        values.merge(defaults.values) { own, _ in own }
    }

    /// These settings with only those of `scope` kept.
    func keeping(_ scope: SettingScope) -> EffectivePolicySettings {
        var result = EffectivePolicySettings()
        result.values = values.filter { PolicyKeys.scope(of: $0.key) == scope }
        return result
    }

    /// Every setting's step (`apps.managed` excepted), in document order.
    func pointedSteps() -> [PointedStep] {
        PolicyKeys.all.compactMap { setting in
            guard setting.name != PolicyKeys.Apps.managed.name else { return nil }
            let resolved = values[setting.name]
            return PointedStep(pointer: setting.pointer, step: setting.step(resolved), isSet: resolved != nil)
        }
    }

    /// The step of `setting`, as `explain` shows it.
    func step<Parsed, Value>(_ setting: PolicySetting<Parsed, Value>) -> ExplanationStep {
        setting.step(values[setting.name])
    }
}
