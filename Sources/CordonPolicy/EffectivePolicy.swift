/// The merged policy: every setting's effective value and the rules (file + pointer) it came from.
///
/// Built by ``merge(_:)`` from every document in force (the caller includes the built-in default,
/// which sets every key). Merging is "most restrictive wins", setting by setting:
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
    /// The effective `apps` section.
    public internal(set) var apps = EffectiveAppsSettings()
    /// The effective `passcode` section.
    public internal(set) var passcode = EffectivePasscodeSettings()
    /// The sections every app gets before overrides.
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
        if let section = document.apps { apps = EffectiveAppsSettings(section, at: top) }
        if let section = document.passcode { passcode = EffectivePasscodeSettings(section, at: top) }
        base = EffectivePolicySettings(
            lock: document.lock, pasteboard: document.pasteboard, documents: document.documents,
            storage: document.storage, conditions: document.conditions, at: top)
        for (index, override) in document.overrides.enumerated() {
            let settings = EffectivePolicySettings(
                lock: override.lock, pasteboard: override.pasteboard, documents: override.documents,
                storage: override.storage, conditions: override.conditions,
                at: RuleLocator(source: source, prefix: "/overrides/\(index)"))
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
        result.apps = apps.merged(with: other.apps)
        result.passcode = passcode.merged(with: other.passcode)
        result.base = base.merged(with: other.base)
        result.overrides.merge(other.overrides) { $0.merged(with: $1) }
        return result
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
        for pointed in globalSteps() + base.pointedSteps() {
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

    /// The `apps` and `passcode` steps.
    func globalSteps() -> [PointedStep] {
        var steps = [PointedStep("apps", "unknown", apps.unknown)]
        for app in apps.managed.keys.sorted() {
            guard let binding = apps.managed[app] else { continue }
            var pointed = PointedStep("apps", "managed", binding, combined: true)
            pointed.pointer += "/" + PolicyFormat.pointerToken(app)
            pointed.step.setting += "." + app
            steps.append(pointed)
        }
        steps += [
            PointedStep("passcode", "minLength", passcode.minLength),
            PointedStep("passcode", "kind", passcode.kind),
            PointedStep("passcode", "allowSimple", passcode.allowSimple),
            PointedStep("passcode", "maxAttempts", passcode.maxAttempts),
            PointedStep("passcode", "onMaxAttempts", passcode.onMaxAttempts),
        ]
        return steps
    }
}

extension EffectivePolicySettings {
    /// Every per-app setting's step, in section order.
    func pointedSteps() -> [PointedStep] {
        [
            PointedStep("lock", "idleTimeoutSeconds", lock.idleTimeoutSeconds),
            PointedStep("lock", "onScreenLock", lock.onScreenLock),
            PointedStep("lock", "onSuspend", lock.onSuspend),
            PointedStep("lock", "reauthGraceSeconds", lock.reauthGraceSeconds),
            PointedStep("lock", "discardKeyOnLock", lock.discardKeyOnLock),
            PointedStep("lock", "ackDeadlineMs", lock.ackDeadlineMs),
            PointedStep("lock", "onAckTimeout", lock.onAckTimeout),
            PointedStep("pasteboard", "copyOut", pasteboard.copyOut),
            PointedStep("pasteboard", "maxChars", pasteboard.maxChars),
            PointedStep("pasteboard", "clearOnLock", pasteboard.clearOnLock),
            PointedStep("documents", "sendTo", documents.sendTo),
            PointedStep("documents", "receiveFrom", documents.receiveFrom),
            PointedStep("documents", "allowedTargets", documents.allowedTargets, combined: true),
            PointedStep("documents", "allowedSources", documents.allowedSources, combined: true),
            PointedStep("documents", "saveCopies", documents.saveCopies),
            PointedStep("documents", "saveLocations", documents.saveLocations, combined: true),
            PointedStep("documents", "blockedTypes", documents.blockedTypes, combined: true),
            PointedStep("storage", "dataAccess", storage.dataAccess),
            PointedStep("conditions", "debuggerAttached", conditions.debuggerAttached),
            PointedStep("conditions", "preloadInjected", conditions.preloadInjected),
            PointedStep("conditions", "executableMismatch", conditions.executableMismatch),
        ]
    }
}
