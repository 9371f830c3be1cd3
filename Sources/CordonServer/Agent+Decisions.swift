import CordonPolicy
import CordonProtocol

extension Agent {
    /// The caller as the policy sees it: its registration, or an unmanaged nobody.
    func appFacts(of connection: AgentConnection) -> AppFacts {
        let registration = registry.registrations[connection.id]
        return AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
    }

    /// Decides one action and audits it as `check` does (every deny; allows when configured);
    /// `location` is a canonical path (a shared document's, whose extension `blockedTypes` checks).
    func decide(
        _ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?, location: String?
    ) -> PolicyDecision {
        let request = DecisionRequest(
            action: action, app: app, peer: peer, location: location, contentType: contentType, length: length)
        let decision = policy.decide(request)
        auditDecision(decision, appId: app.id.isEmpty ? nil : app.id)
        return decision
    }

    /// The typed error for a denied decision.
    func denial(_ decision: PolicyDecision) -> CordonError {
        .denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules.map(\.description))
    }
}
