/// The effective policy compiled once for fast decisions: the base and every overridden app's
/// settings precomputed, lists turned into sets and matchers, reason sentences built in advance.
///
/// Build it whenever the effective policy changes; ``PolicyEvaluator`` wraps it with the
/// decision functions. It is immutable and `Sendable`, so any number of tasks can share one.
public struct CompiledPolicy: Sendable {
    /// The version hash of the policy it was compiled from.
    public let versionHash: String
    let base: CompiledAppPolicy
    /// Apps that overrides name: base merged with their overrides.
    let perApp: [String: CompiledAppPolicy]
    /// The same when there are few: comparing a few short ids beats hashing one.
    let perAppList: [(id: String, settings: CompiledAppPolicy)]
    let bindings: [String: CompiledBinding]
    let unknown: UnknownAppAction
    let unknownRules: [RuleReference]

    /// Compiles `policy`.
    public init(_ policy: EffectivePolicy) {
        versionHash = policy.versionHash
        base = CompiledAppPolicy(policy.base)
        var perApp: [String: CompiledAppPolicy] = [:]
        for app in policy.overrides.keys { perApp[app] = CompiledAppPolicy(policy.forApp(app)) }
        self.perApp = perApp
        perAppList =
            perApp.count <= Self.linearLookupLimit ? perApp.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } : []
        bindings = policy.managedApps.mapValues(CompiledBinding.init)
        unknown = policy[PolicyKeys.Apps.unknown].value
        unknownRules = policy[PolicyKeys.Apps.unknown].rules
    }

    /// Whether app `id` is managed: bound by `apps.managed`, or any app while `apps.unknown` is
    /// `trusted` (what `EffectivePolicy` says, without a setting lookup per call).
    public func isManaged(_ id: String) -> Bool {
        unknown == .trusted || bindings[id] != nil
    }

    /// Up to this many overridden apps are looked up by comparison instead of hashing.
    static let linearLookupLimit = 8

    /// The compiled settings of app `id` (the base unless an override names it).
    @inline(__always)
    func settings(for id: String) -> CompiledAppPolicy {
        overridden(id) ?? base
    }

    /// Whether overrides name app `id`.
    @inline(__always)
    func isOverridden(_ id: String) -> Bool {
        overridden(id) != nil
    }

    /// The compiled settings of app `id` when overrides name it.
    @inline(__always)
    private func overridden(_ id: String) -> CompiledAppPolicy? {
        if perApp.isEmpty { return nil }
        if perApp.count > Self.linearLookupLimit { return perApp[id] }
        for entry in perAppList where entry.id == id { return entry.settings }
        return nil
    }
}

/// One `apps.managed` binding, compiled.
struct CompiledBinding: Sendable {
    let executables: Set<String>
    let sha256: Set<String>?
    let flatpak: Set<String>?
    let rules: [RuleReference]

    init(_ setting: ResolvedSetting<ManagedAppRequirement>) {
        executables = setting.value.executables
        sha256 = setting.value.sha256
        flatpak = setting.value.flatpak
        rules = setting.rules
    }

    /// Why the client `facts` describe does not match, or nil when it does: a Flatpak binding
    /// needs the verified sandbox of that app; a host binding, a client outside any user
    /// namespace its user made; both, a bound executable and (when listed) digest.
    func mismatch(_ facts: RegistrationFacts) -> String? {
        if let flatpak {
            switch facts.sandbox {
            case .flatpak(let appId) where flatpak.contains(appId): break
            case .flatpak(let appId):
                return "it is the Flatpak app \"\(appId)\", not \(PolicyFormat.list(flatpak))"
            case .unverified(let why): return "its Flatpak sandbox does not verify: \(why)"
            case nil: return "it does not run in a Flatpak sandbox and the binding names one"
            }
        } else if facts.inUserMadeNamespace {
            return "it runs in a user namespace its user made, where any file may be mounted over the system's; "
                + "a binding by executable path cannot vouch for it (bind it by \"flatpak\" if it is sandboxed)"
        }
        return mismatch(executable: facts.executable, digest: facts.sha256)
    }

    /// Why a client with `executable` and `digest` does not match, or nil when it does.
    func mismatch(executable: String, digest: String?) -> String? {
        guard executables.contains(executable) else { return "its executable is not one of the bound executables" }
        guard let sha256 else { return nil }
        guard let digest else { return "its executable's SHA-256 is unknown and the binding requires one" }
        return sha256.contains(digest.lowercased()) ? nil : "its executable's SHA-256 is not one of the bound digests"
    }
}

/// `saveCopies` and the compiled `saveLocations` clauses.
final class CompiledSave: Sendable {
    /// One clause: the location must match one of its globs.
    struct Clause: Sendable {
        let globs: [PathGlob]
        let rules: [RuleReference]
        func matches(_ location: String) -> Bool { globs.contains { $0.matches(location) } }
    }

    let saveCopies: SaveCopies
    let saveCopiesRules: [RuleReference]
    /// nil when no document restricts locations.
    let clauses: [Clause]?
    let locationRules: [RuleReference]
    let allowRules: [RuleReference]
    let allowReason: String
    let blockReason: String
    let outsideReason: String
    let noLocationReason: String

    init(saveCopies: ResolvedSetting<SaveCopies>, locations: ResolvedSetting<SaveLocationClauses?>) {
        self.saveCopies = saveCopies.value
        saveCopiesRules = saveCopies.rules
        clauses = locations.value.map { value in
            value.sortedClauses.map { clause in
                let globs = clause.sorted().map(PathGlob.init)
                let rules = locations.candidates.filter { $0.value?.clauses.contains(clause) ?? false }.map(\.rule)
                return Clause(globs: globs, rules: rules)
            }
        }
        locationRules = locations.rules
        allowRules = PolicyFormat.sortedUnion(saveCopies.rules, locations.rules, by: <)
        let setting = "documents.saveCopies is \(saveCopies.value.policyDescription)"
        allowReason = setting + (clauses == nil ? "" : " and the location matches documents.saveLocations")
        blockReason = setting
        outsideReason = "documents.saveLocations does not match the location"
        noLocationReason = "documents.saveLocations is set and the save names no location"
    }
}

/// One `conditions` entry.
struct CompiledCondition: Sendable {
    let name: String
    let action: ConditionAction
    let rules: [RuleReference]

    init(_ setting: ResolvedSetting<ConditionAction>, name: String) {
        self.name = name
        action = setting.value
        rules = setting.rules
    }
}
