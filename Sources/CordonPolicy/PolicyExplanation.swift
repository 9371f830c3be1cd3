/// One document's value for a consulted setting, and whether it is (one of) the winning values.
public struct ExplanationCandidate: Sendable, Hashable {
    /// Where the value is set (file + pointer).
    public var rule: RuleReference
    /// The value set there, as a policy file spells it.
    public var value: String
    /// Whether this value is the effective one (for lists: whether it contributes to the result).
    public var won: Bool

    /// A candidate of an explanation step.
    public init(rule: RuleReference, value: String, won: Bool) {
        self.rule = rule
        self.value = value
        self.won = won
    }
}

/// One consulted setting: its effective value, every document's value for it and which won.
public struct ExplanationStep: Sendable, Hashable {
    /// The setting, dotted: `pasteboard.copyOut`, `apps.managed.com.example.notes`.
    public var setting: String
    /// The effective value; when `candidates` is empty no document sets it and this is the loosest default.
    public var value: String
    /// The effective value as JSON text (`null` for no bound).
    public var json: String = "null"
    /// The rules whose value won.
    public var rules: [RuleReference]
    /// Every document's value, sorted by rule.
    public var candidates: [ExplanationCandidate]

    /// An explanation step.
    public init(setting: String, value: String, rules: [RuleReference], candidates: [ExplanationCandidate]) {
        self.setting = setting
        self.value = value
        self.rules = rules
        self.candidates = candidates
    }
}

/// A decision and the chain behind it, for `cordon policy explain`.
public struct PolicyExplanation: Sendable, Hashable {
    /// The decision (for a registration: allowed unless refused).
    public var decision: PolicyDecision
    /// For `app.register`: the registration decision.
    public var registration: RegistrationDecision?
    /// The app ids whose settings applied (the app, plus the source for a paste).
    public var apps: [String]
    /// Every setting the decision consults, in the order it consults them.
    public var steps: [ExplanationStep]

    /// An explanation.
    public init(
        decision: PolicyDecision, registration: RegistrationDecision? = nil, apps: [String],
        steps: [ExplanationStep]
    ) {
        self.decision = decision
        self.registration = registration
        self.apps = apps
        self.steps = steps
    }

    /// The step for `setting` (dotted), if the decision consulted it.
    public func step(_ setting: String) -> ExplanationStep? {
        steps.first { $0.setting == setting }
    }
}

/// One setting of the effective policy, for `cordon policy show`.
public struct EffectiveSetting: Sendable, Hashable {
    /// A JSON-pointer-like path: `/pasteboard/copyOut`, `/apps/managed/<id>`,
    /// `/overrides/<app id>/documents/sendTo` (app ids escaped as in RFC 6901).
    public var path: String
    /// The effective value, as a policy file spells it (`unlimited` / `unrestricted` for no bound).
    public var value: String
    /// The effective value as JSON text (`null` for no bound).
    public var json: String
    /// The rules whose value won; empty when no document sets it (the loosest default applies).
    public var rules: [RuleReference]

    /// An effective setting.
    public init(path: String, value: String, json: String, rules: [RuleReference]) {
        self.path = path
        self.value = value
        self.json = json
        self.rules = rules
    }
}

/// A setting's step with the pointer it lives at, used to list and explain settings.
struct PointedStep {
    var pointer: String
    var step: ExplanationStep
    var isSet: Bool

}

extension PolicyExplanation {
    /// The chain behind `decision` for `request` (any action but `app.register`): the settings
    /// of the apps whose policy applied, step by step.
    init(request: DecisionRequest, decision: PolicyDecision, policy: EffectivePolicy) {
        let (apps, settings) = Self.applicableSettings(request, policy)
        typealias Documents = PolicyKeys.Documents
        let steps: [ExplanationStep]
        switch request.action {
        case .pasteboardCopy, .pasteboardPaste:
            steps = [settings.step(PolicyKeys.Pasteboard.copyOut), settings.step(PolicyKeys.Pasteboard.maxChars)]
        case .documentSend:
            steps = [
                settings.step(Documents.sendTo), settings.step(Documents.allowedTargets),
                settings.step(Documents.blockedTypes),
            ]
        case .documentReceive:
            steps = [
                settings.step(Documents.receiveFrom), settings.step(Documents.allowedSources),
                settings.step(Documents.blockedTypes),
            ]
        case .documentSave:
            steps = [
                settings.step(Documents.saveCopies), settings.step(Documents.saveLocations),
                settings.step(Documents.blockedTypes),
            ]
        case .appRegister:
            steps = []
        }
        self.init(decision: decision, apps: apps, steps: steps)
    }

    /// The chain behind a registration: the app's binding (when bound), `apps.unknown`, then the
    /// conditions (from the app's settings, overrides included).
    init(facts: RegistrationFacts, registration: RegistrationDecision, policy: EffectivePolicy) {
        var steps: [ExplanationStep] = []
        if let binding = policy.managedApps[facts.appId] {
            steps.append(binding.step("apps.managed.\(facts.appId)", combined: true))
        }
        steps.append(policy.base.step(PolicyKeys.Apps.unknown))
        let settings = policy.forApp(facts.appId)
        steps += [
            settings.step(PolicyKeys.Conditions.executableMismatch),
            settings.step(PolicyKeys.Conditions.debuggerAttached),
            settings.step(PolicyKeys.Conditions.preloadInjected),
        ]
        self.init(
            decision: PolicyDecision(registration), registration: registration, apps: [facts.appId], steps: steps)
    }

    /// Whose settings a decision uses, as ``PolicyEvaluator`` applies them: the acting app's, and
    /// for a paste also the source's when overrides name it (merged, most restrictive wins).
    static func applicableSettings(
        _ request: DecisionRequest, _ policy: EffectivePolicy
    ) -> (apps: [String], settings: EffectivePolicySettings) {
        let app = request.app.id
        guard request.action == .pasteboardPaste, let peer = request.peer?.id, peer != app,
            policy.overrides[peer] != nil
        else { return ([app], policy.forApp(app)) }
        return ([app, peer], policy.forApp(app).merged(with: policy.forApp(peer)))
    }
}

extension PolicyExplanation: CustomStringConvertible {
    /// The decision, then each step with every document's value; winners are marked `*`.
    public var description: String {
        var lines = [
            "\(decision.allowed ? "allowed" : "denied"): \(decision.action.rawValue) — \(decision.reason)"
        ]
        for obligation in decision.obligations {
            if case .truncate(let maxChars) = obligation { lines.append("  obligation: truncate to \(maxChars)") }
        }
        for step in steps {
            lines.append("  \(step.setting) = \(step.value)")
            if step.candidates.isEmpty { lines.append("    (no document sets it: the loosest default applies)") }
            for candidate in step.candidates {
                lines.append("    \(candidate.won ? "*" : " ") \(candidate.rule) = \(candidate.value)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
