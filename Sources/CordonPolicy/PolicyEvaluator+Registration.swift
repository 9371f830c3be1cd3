extension PolicyEvaluator {
    /// Decides a client's registration as app `facts.appId`.
    ///
    /// - A bound id (`apps.managed`): a client whose executable is bound and whose digest matches
    ///   (when the binding lists digests; an unknown digest then does not match) registers
    ///   `managed`. Otherwise `conditions.executableMismatch` applies: `warn` registers it
    ///   `unmanaged` (no key) with a warning, `block` refuses it, `wipe` refuses it and wipes.
    /// - An unbound id: `apps.unknown`: `trusted` registers it managed (the policy says plainly
    ///   that unbound apps are trusted), `unmanaged` registers it without a key, `refuse` refuses
    ///   it. With no binding at all and the default `unmanaged`, no app gets a key until an admin
    ///   binds apps (docs/THREAT-MODEL.md).
    /// - `debuggerAttached` / `preloadInjected` facts fire their conditions: `warn` adds a
    ///   warning, `block` refuses, `wipe` refuses and wipes.
    ///
    /// The most severe outcome wins (refused over unmanaged over managed); the reason is that of
    /// the deciding check, and the rules name every check that fired. Conditions are read from the
    /// app's settings, so overrides can tighten them per app.
    public func register(_ facts: RegistrationFacts) -> RegistrationDecision {
        let settings = compiled.settings(for: facts.appId)
        var verdict = RegistrationVerdict()
        let app = PolicyFormat.quoted(facts.appId)
        if let binding = compiled.bindings[facts.appId] {
            if let why = binding.mismatch(facts) {
                let detail = "the client does not match apps.managed for \(app): \(why)"
                verdict.fire(settings.executableMismatch, detail: detail, extraRules: binding.rules)
            } else {
                verdict.note(.managed, "apps.managed binds \(app) and the client matches the binding", binding.rules)
            }
        } else {
            let action = compiled.unknown
            let outcome: RegistrationDecision.Outcome
            switch action {
            case .trusted: outcome = .managed
            case .unmanaged: outcome = .unmanaged
            case .refuse: outcome = .refused
            }
            verdict.note(
                outcome, "apps.unknown is \(action.policyDescription) and \(app) is not bound in apps.managed",
                compiled.unknownRules)
        }
        if facts.debuggerAttached {
            verdict.fire(settings.debuggerAttached, detail: "a debugger is attached")
        }
        if facts.preloadInjected {
            verdict.fire(
                settings.preloadInjected,
                detail: facts.injection.map { "a library is injected (\($0))" } ?? "a preload library is injected")
        }
        return verdict.decision
    }
}

/// Accumulates the checks of one registration; the most severe decides.
struct RegistrationVerdict {
    private var outcome: RegistrationDecision.Outcome = .managed
    private var wipe = false
    private var warnings: [String] = []
    private var reason: String?
    private var severity = -1
    private var rules: [RuleReference] = []

    /// Records a check's outcome; it decides when it is more severe than every earlier one.
    mutating func note(
        _ outcome: RegistrationDecision.Outcome, wipe: Bool = false, _ reason: String, _ rules: [RuleReference]
    ) {
        let severity = Self.severity(outcome, wipe: wipe)
        if severity > self.severity {
            self.severity = severity
            self.outcome = outcome
            self.reason = reason
        }
        self.wipe = self.wipe || wipe
        self.rules = PolicyFormat.sortedUnion(self.rules, rules, by: <)
    }

    /// Records a condition that fired: `warn` warns (a mismatch also makes the client unmanaged),
    /// `block` refuses, `wipe` refuses and wipes.
    mutating func fire(_ condition: CompiledCondition, detail: String, extraRules: [RuleReference] = []) {
        let reason = "conditions.\(condition.name) is \(condition.action.policyDescription) and \(detail)"
        let rules = PolicyFormat.sortedUnion(condition.rules, extraRules, by: <)
        switch condition.action {
        case .warn:
            warnings.append(condition.name)
            note(condition.name == "executableMismatch" ? .unmanaged : .managed, reason, rules)
        case .block:
            note(.refused, reason, rules)
        case .wipe:
            note(.refused, wipe: true, reason, rules)
        }
    }

    var decision: RegistrationDecision {
        RegistrationDecision(
            outcome: outcome, wipe: wipe, warnings: warnings, reason: reason ?? "no check applies", rules: rules)
    }

    private static func severity(_ outcome: RegistrationDecision.Outcome, wipe: Bool) -> Int {
        switch outcome {
        case .managed: return 0
        case .unmanaged: return 1
        case .refused: return wipe ? 3 : 2
        }
    }
}
