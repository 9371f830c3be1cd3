/// The merged policy: every setting's effective value and the rules (file + pointer) it came from.
///
/// Built by ``merge(_:fallback:)`` from every document in force and the built-in default. Merging
/// is "most restrictive wins", setting by setting, each by the rule its declaration in
/// ``PolicyKeys`` names:
/// - ordered enums keep the highest `strictness`; booleans the stricter value (`true` for
///   `discardKeyOnLock`, `onScreenLock`, `onSuspend`, `clearOnLock`; `false` for `allowSimple`);
/// - `idleTimeoutSeconds` keeps the smallest positive value (0, "never", is the loosest);
///   `reauthGraceSeconds`, `maxAttempts`, `ackDeadlineMs`, `maxChars` the smallest; `minLength` the largest;
/// - allow-lists (`allowedTargets`, `allowedSources`, `saveLocations`) intersect: an absent list
///   restricts nothing, an empty one allows nothing; `saveLocations` keeps one clause per document
///   and a location must match every clause;
/// - `blockedTypes` unite (lower-cased);
/// - `apps.managed` bindings unite by id, and two bindings of one id intersect their executables
///   and digests; bindings from user documents are ignored.
///
/// Overrides apply per app: ``forApp(_:)`` merges the base with every override listing the app,
/// so an override can only tighten. Merging is commutative, associative and idempotent; the
/// provenance lists are kept sorted, so equal inputs in any order give equal values.
public struct EffectivePolicy: Sendable, Hashable {
    /// `apps.managed`: the bindings by app id, each with the rules it came from; two documents
    /// binding one id intersect their lists. Bindings from user documents are ignored: users
    /// cannot make an app managed.
    public internal(set) var managedApps: [String: ResolvedSetting<ManagedAppRequirement>] = [:]
    /// Every setting before overrides: the global ones (`passcode`, `apps.unknown`) and the base
    /// every app gets.
    public internal(set) var base = EffectivePolicySettings()
    /// Per app id: the merge of every override listing it (without the base).
    public internal(set) var overrides: [String: EffectivePolicySettings] = [:]

    /// No document: every setting at its loosest value (the identity of merging).
    public static let empty = EffectivePolicy()

    /// The policy with nothing set.
    public init() {}

    /// The policy one document sets, its rules named after `source`.
    public init(document: PolicyDocument, source: PolicySource) {
        let top = RuleLocator(source: source, prefix: "")
        base = EffectivePolicySettings(document.settings, at: top)
        if source.origin != .user, let bindings = document[PolicyKeys.Apps.managed] {
            for (index, binding) in bindings.enumerated() {
                let requirement = ManagedAppRequirement(
                    executables: Set(binding.executables),
                    sha256: binding.sha256.isEmpty ? nil : Set(binding.sha256.map { $0.lowercased() }),
                    flatpak: binding.flatpak.map { [$0] })
                let setting = ResolvedSetting(requirement, at: top(PolicyKeys.Apps.managed.pointer + "/\(index)"))
                managedApps[binding.id] =
                    managedApps[binding.id].map { $0.combining(setting) { $0.intersecting($1) } } ?? setting
            }
        }
        for (index, override) in document.overrides.enumerated() {
            let settings = EffectivePolicySettings(
                override.settings, at: RuleLocator(source: source, prefix: "/overrides/\(index)"))
            for app in Set(override.apps) {
                overrides[app] = overrides[app].map { $0.merged(with: settings) } ?? settings
            }
        }
    }

    /// Merges every document in force: the most restrictive value of each setting wins.
    public static func merge(_ documents: [(PolicyDocument, PolicySource)]) -> EffectivePolicy {
        documents.reduce(EffectivePolicy.empty) { policy, entry in
            policy.merged(with: EffectivePolicy(document: entry.0, source: entry.1))
        }
    }

    /// The most restrictive of both policies (the join: commutative, associative, idempotent).
    public func merged(with other: EffectivePolicy) -> EffectivePolicy {
        var result = self
        result.managedApps.merge(other.managedApps) { lhs, rhs in lhs.combining(rhs) { $0.intersecting($1) } }
        result.base = base.merged(with: other.base)
        result.overrides.merge(other.overrides) { $0.merged(with: $1) }
        return result
    }

    /// The effective value of `setting` before overrides (for the global settings: its value).
    public subscript<Parsed, Value>(_ setting: PolicySetting<Parsed, Value>) -> ResolvedSetting<Value> {
        base[setting]
    }

    /// The settings app `id` gets: the base merged with every override listing it.
    public func forApp(_ id: String) -> EffectivePolicySettings {
        guard let override = overrides[id] else { return base }
        return base.merged(with: override)
    }

    /// The app ids that overrides name, sorted.
    public var overriddenApps: [String] { overrides.keys.sorted() }
}

extension EffectivePolicy {
    /// Every setting with its effective value and provenance, for `cordon policy show`: `apps`,
    /// `passcode`, the base sections, then per overridden app (sorted) the settings its overrides set.
    public func describeEffective() -> [EffectiveSetting] {
        var settings: [EffectiveSetting] = []
        let steps = base.pointedSteps()
        let apps = steps.prefix { $0.pointer.utf8.starts(with: ("/" + PolicyKeys.Apps.section.name + "/").utf8) }
        for pointed in apps + managedSteps() + steps.dropFirst(apps.count) {
            settings.append(
                EffectiveSetting(
                    path: pointed.pointer, value: pointed.step.value, json: pointed.step.json, rules: pointed.step.rules
                ))
        }
        for app in overriddenApps {
            guard let override = overrides[app] else { continue }
            let prefix = "/overrides/\(PolicyFormat.pointerToken(app))"
            let applied = base.merged(with: override).pointedSteps()
            for (own, pointed) in zip(override.pointedSteps(), applied) where own.isSet {
                settings.append(
                    EffectiveSetting(
                        path: prefix + pointed.pointer, value: pointed.step.value, json: pointed.step.json,
                        rules: pointed.step.rules))
            }
        }
        return settings
    }

    /// A stable hash of the effective values (not their provenance): 16 lower-case hex digits of
    /// FNV-1a (64-bit) over the canonical listing of ``describeEffective()``. Equal policies hash
    /// equally whatever the order of their documents; moving a rule between files keeps the hash.
    public var versionHash: String {
        var hash = FNV1a()
        hash.combine(PolicyDocument.schemaIdentifier)
        for setting in describeEffective() {
            hash.combine(setting.path)
            hash.combine(setting.value)
        }
        let digits = String(hash.value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The steps of `apps.managed`, one per bound app id (sorted).
    func managedSteps() -> [PointedStep] {
        managedApps.keys.sorted().compactMap { app in
            guard let binding = managedApps[app] else { return nil }
            let setting = PolicyKeys.Apps.managed
            return PointedStep(
                pointer: setting.pointer + "/" + PolicyFormat.pointerToken(app),
                step: binding.step(setting.name + "." + app, combined: true), isSet: binding.isSet)
        }
    }
}
