import CordonProtocol

/// Decides, registers and explains against one effective policy.
///
/// Build one whenever the documents in force change; it compiles the policy once, and
/// ``decide(_:)`` then only compares values and copies precomputed sentences and rule lists.
/// Every decision names its rules (file + JSON pointer) and gives a one-sentence reason naming
/// the setting and its value, e.g. `pasteboard.copyOut is "managed" and the source is unmanaged`.
///
/// Whose settings apply (overrides are per app): the acting app's for `pasteboard.copy` and the
/// `document.*` actions; for `pasteboard.paste` both the pasting app's and the source's, most
/// restrictive winning (the content leaves one and enters the other).
public struct PolicyEvaluator: Sendable {
    /// The merged policy, with provenance (for `show` and `explain`).
    public let policy: EffectivePolicy
    /// The compiled form decisions use.
    public let compiled: CompiledPolicy

    /// Compiles `policy`.
    public init(_ policy: EffectivePolicy) {
        self.policy = policy
        compiled = CompiledPolicy(policy)
    }

    /// Merges `documents` (the caller includes the built-in default) and compiles the result.
    public init(documents: [(PolicyDocument, PolicySource)]) {
        self.init(EffectivePolicy.merge(documents))
    }

    /// The version hash of the policy (what `PolicyDidChange` carries).
    public var versionHash: String { compiled.versionHash }

    /// Decides `request`.
    ///
    /// - `pasteboard.copy`: always allowed: copies enter the managed pasteboard, and the paste
    ///   decides where content may go (so even an unmanaged app may copy, whatever `copyOut`);
    ///   content longer than `maxChars` carries `truncate(maxChars)`.
    /// - `pasteboard.paste` (`app` pastes content from `peer`; a nil or unmanaged peer is an
    ///   unmanaged source): pasting within one app is always allowed; across apps `any` allows,
    ///   `managedWithPasteIn` allows when the pasting app is managed, `managed` when both are,
    ///   `blocked` never; an allowed cross-app paste longer than `maxChars` is truncated.
    ///   Without a `length` no truncation is imposed.
    /// - `document.send` / `document.receive` (`peer` is the target / source): the scope
    ///   (`none` denies, `managed` needs a managed peer), then the allow-list (a nil peer is never
    ///   listed), then `blockedTypes` against `contentType` (skipped when nil).
    /// - `document.save`: `saveCopies: block` denies; with `saveLocations` the `location` must
    ///   match every document's list (a missing location is denied); `blockedTypes` is checked
    ///   against `contentType` and the location's file name extension.
    /// - `app.register`: the outcome of ``register(_:)`` for `app.id` with `location` as the
    ///   executable (no digest, no conditions); allowed unless refused. Prefer ``register(_:)``.
    public func decide(_ request: DecisionRequest) -> PolicyDecision {
        switch request.action {
        case .pasteboardCopy: return copy(request)
        case .pasteboardPaste: return paste(request)
        case .documentSend:
            let settings = compiled.settings(for: request.app.id)
            return share(request, settings.send, settings.blocked)
        case .documentReceive:
            let settings = compiled.settings(for: request.app.id)
            return share(request, settings.receive, settings.blocked)
        case .documentSave: return save(request)
        case .appRegister:
            let registration = register(RegistrationFacts(appId: request.app.id, executable: request.location ?? ""))
            return PolicyDecision(registration)
        }
    }

    /// Every setting with its effective value and provenance, for `cordon policy show`.
    public func describeEffective() -> [EffectiveSetting] { policy.describeEffective() }

    /// Explains `request`: the decision and every setting it consults, with each document's value.
    public func explain(_ request: DecisionRequest) -> PolicyExplanation {
        if request.action == .appRegister {
            return explain(RegistrationFacts(appId: request.app.id, executable: request.location ?? ""))
        }
        return PolicyExplanation(request: request, decision: decide(request), policy: policy)
    }

    /// Explains a registration: the outcome, the binding, `apps.unknown` and the conditions.
    public func explain(_ facts: RegistrationFacts) -> PolicyExplanation {
        let registration = register(facts)
        return PolicyExplanation(facts: facts, registration: registration, policy: policy)
    }
}

extension PolicyDecision {
    /// An allowed decision.
    @inline(__always)
    static func allow(
        _ action: PolicyAction, _ reason: String, _ rules: [RuleReference], _ obligations: [Obligation] = []
    ) -> PolicyDecision {
        PolicyDecision(allowed: true, action: action, reason: reason, obligations: obligations, rules: rules)
    }

    /// A denial.
    @inline(__always)
    static func deny(_ action: PolicyAction, _ reason: String, _ rules: [RuleReference]) -> PolicyDecision {
        PolicyDecision(allowed: false, action: action, reason: reason, rules: rules)
    }

    /// A registration as an `app.register` decision: allowed unless refused.
    init(_ registration: RegistrationDecision) {
        self.init(
            allowed: registration.outcome != .refused, action: .appRegister, reason: registration.reason,
            rules: registration.rules)
    }

    /// The truncation limit this decision imposes, if any.
    public var truncationLimit: Int? {
        var limit: Int?
        for case .truncate(let maxChars) in obligations { limit = min(limit ?? maxChars, maxChars) }
        return limit
    }
}
