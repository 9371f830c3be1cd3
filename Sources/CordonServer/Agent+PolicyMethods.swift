import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Crypto
import Foundation
import NIOCore

extension Agent {
    /// `io.cordon.App.Check`: the policy's decision for the app on `connection`; denies are audited.
    func check(_ parameters: CheckParameters, connection: AgentConnection) throws(CordonError) -> (
        WireDecision, EventLoopFuture<Void>?
    ) {
        let registration = registry.registrations[connection.id]
        let app = AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
        let request = try decisionRequest(
            action: parameters.action, app: app, target: parameters.target, context: parameters.context)
        let decision = policy.decide(request)
        let stored = auditDecision(decision, appId: registration?.appId)
        return (Self.wire(decision), stored)
    }

    /// Audits and logs `decision`: every deny, and allows when configured.
    @discardableResult
    func auditDecision(_ decision: PolicyDecision, appId: String?) -> EventLoopFuture<Void>? {
        guard !decision.allowed || configuration.auditAllows else { return nil }
        let stored = writeAudit([
            AuditRecord(
                time: clock(), category: "decision", appId: appId, action: decision.action.rawValue,
                outcome: decision.allowed ? "allow" : "deny", reason: decision.reason,
                rules: decision.rules.map(\.description).joined(separator: "\n"))
        ])
        logger.info(
            "policy decision",
            metadata: [
                "appId": "\(appId ?? "-")", "action": "\(decision.action.rawValue)",
                "allowed": "\(decision.allowed)", "reason": "\(decision.reason)",
            ])
        return stored
    }

    /// Builds a decision request; the peer is managed when the policy binds its id.
    func decisionRequest(action name: String, app: AppFacts, target: String?, context: [String: String]?)
        throws(CordonError) -> DecisionRequest
    {
        guard let action = PolicyAction(rawValue: name), action != .appRegister else {
            throw .unknownAction(action: name)
        }
        let isSave = action == .documentSave
        let peer = isSave ? nil : target.map { AppFacts(id: $0, managed: isManagedByPolicy($0)) }
        return DecisionRequest(
            action: action, app: app, peer: peer, location: isSave ? target : nil,
            contentType: context?["contentType"], length: context?["length"].flatMap { Int($0) })
    }

    /// Whether an app id counts as managed: bound in `apps.managed`, or any id while nothing is
    /// bound and `apps.unknown` is `unmanaged` (the same rule registration follows).
    func isManagedByPolicy(_ appId: String) -> Bool {
        let apps = policy.policy.apps
        return apps.managed[appId] != nil || (apps.managed.isEmpty && apps.unknown.value == .unmanaged)
    }

    /// The facts about a registering client, read from `/proc` (and its executable's digest when
    /// the app's binding asks for one).
    static func registrationFacts(appId: String, identity: PeerIdentity, needsDigest: Bool) -> RegistrationFacts {
        let pid = identity.pid
        var digest: String?
        if needsDigest {
            digest = Self.sha256(ofFileAt: "/proc/\(pid)/exe")
        }
        return RegistrationFacts(
            appId: appId, executable: identity.executable, sha256: digest,
            debuggerAttached: (ProcessInfoReader.tracerPID(of: pid) ?? 0) != 0,
            preloadInjected: ProcessInfoReader.hasPreload(pid))
    }

    /// Lower-case hex SHA-256 of a file, read in chunks; nil when unreadable.
    static func sha256(ofFileAt path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// `io.cordon.Policy.Explain`.
    func explain(_ parameters: ExplainParameters) throws(CordonError) -> ExplainReply {
        let app = AppFacts(id: parameters.appId, managed: isManagedByPolicy(parameters.appId))
        let explanation: PolicyExplanation
        if parameters.action == PolicyAction.appRegister.rawValue {
            explanation = policy.explain(
                RegistrationFacts(appId: parameters.appId, executable: parameters.target ?? ""))
        } else {
            explanation = policy.explain(
                try decisionRequest(
                    action: parameters.action, app: app, target: parameters.target, context: parameters.context))
        }
        let steps = explanation.steps.map { step in
            WireExplanationStep(
                setting: step.setting, value: step.value,
                candidates: step.candidates.map {
                    WireCandidate(rule: $0.rule.description, value: $0.value, won: $0.won)
                })
        }
        return ExplainReply(decision: Self.wire(explanation.decision), steps: steps)
    }

    /// `io.cordon.Policy.Validate`.
    func validate(_ parameters: ValidateParameters) -> ValidateReply {
        let source = PolicySource(path: parameters.path ?? "<inline>", origin: parameters.user == true ? .user : .admin)
        switch PolicyParser.parse(parameters.document, source: source) {
        case .success: return ValidateReply(valid: true, problems: [])
        case .failure(let failure):
            return ValidateReply(
                valid: false,
                problems: failure.diagnostics.map {
                    WireProblem(
                        path: $0.path, pointer: $0.pointer, line: $0.line, column: $0.column, message: $0.message)
                })
        }
    }

    /// `io.cordon.Policy.GetEffective`.
    func effectivePolicy() -> EffectivePolicyReply {
        EffectivePolicyReply(
            version: policy.versionHash,
            settings: policy.describeEffective().map {
                WireSetting(path: $0.path, value: $0.value, rules: $0.rules.map(\.description), json: $0.json)
            })
    }

    static func wire(_ decision: PolicyDecision) -> WireDecision {
        WireDecision(
            allowed: decision.allowed, action: decision.action.rawValue, reason: decision.reason,
            truncateTo: decision.truncationLimit,
            rules: decision.rules.map(\.description))
    }
}
