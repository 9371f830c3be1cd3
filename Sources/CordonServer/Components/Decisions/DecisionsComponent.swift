import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import NIOCore

/// Policy decisions (`io.cordon.App.Check`, and every component's through ``Decider``): the
/// policy in force decides, every deny is audited (and every allow when configured).
final class DecisionsComponent: AgentComponent, Decider {
    /// What deciding needs of the agent.
    typealias Host = AgentEnvironment & PolicyProvider & AuditSink & RegistrationVerifier & PolicyStaleGate

    unowned let host: any Host

    init(host: any Host) {
        self.host = host
    }

    /// The caller as the policy sees it: its registration, or an unmanaged nobody.
    func appFacts(of connection: AgentConnection) -> AppFacts {
        let registration = host.registry.registrations[connection.id]
        return AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
    }

    /// `io.cordon.App.Check`.
    func serveCheck(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let message = call.message
        let parameters = message.parameters.flatMap { $0 == .null ? nil : $0 } ?? .object([])
        // `CheckParameters` is decoded only for a call `CheckCall` refuses: its error names the parameter.
        let checkCall =
            if let read = CheckCall(readingJSON: parameters) { read } else {
                CheckCall(try call.parameters(CheckParameters.self))
            }
        let (decision, stored) = try typed { () throws(CordonError) in try check(checkCall, connection: call.connection)
        }
        let reply = call.encoder.reply(CheckReply(decision: decision))
        // An audited decision is answered once its record is stored.
        guard let stored else { return .reply(reply) }
        return .deferred(stored.map { reply })
    }

    /// `io.cordon.App.Check`: the policy's decision for the app on `connection`; denies are audited.
    /// A `document.save` target is canonicalised first; one whose directory does not resolve is denied.
    func check(_ call: CheckCall, connection: AgentConnection) throws(CordonError) -> (
        CordonDecision, EventLoopFuture<Void>?
    ) {
        let registration = host.registry.registrations[connection.id]
        let app = AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
        var request = try decisionRequest(
            action: call.action, app: app, target: call.target, contentType: call.contentType, length: call.length)
        let decision: PolicyDecision
        if request.action == .documentSave, let location = request.location {
            // `document.save` is decided on the canonical destination: the directory's real path
            // (`..`, `.` and symlinks resolved) plus the file name, so that neither `..` nor a
            // symlinked directory leads out of `saveLocations`.
            do {
                request.location = try OpenedDocument.canonicalDestination(location)
                decision = host.policy.decide(request)
            } catch {
                decision = PolicyDecision(allowed: false, action: .documentSave, reason: error.description, rules: [])
            }
        } else {
            decision = host.policy.decide(request)
        }
        let decided = stale(decision)
        let stored = auditDecision(decided, appId: registration?.appId)
        return (Self.wire(decided), stored)
    }

    /// Audits and logs `decision`: every deny, and allows when configured.
    @discardableResult
    func auditDecision(_ decision: PolicyDecision, appId: String?) -> EventLoopFuture<Void>? {
        guard !decision.allowed || host.configuration.auditAllows else { return nil }
        let stored = host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .decision, appId: appId, action: decision.action.rawValue,
                outcome: decision.allowed ? "allow" : "deny", reason: decision.reason,
                rules: decision.rules.map(\.description))
        ])
        host.logger.info(
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
        try decisionRequest(
            action: name, app: app, target: target, contentType: context?["contentType"], length: context?["length"])
    }

    /// Builds a decision request from the two context entries a decision reads.
    func decisionRequest(action name: String, app: AppFacts, target: String?, contentType: String?, length: String?)
        throws(CordonError) -> DecisionRequest
    {
        guard let action = PolicyAction(rawValue: name), action != .appRegister else {
            throw .unknownAction(action: name)
        }
        let isSave = action == .documentSave
        let peer = isSave ? nil : target.map { AppFacts(id: $0, managed: isManagedByPolicy($0)) }
        return DecisionRequest(
            action: action, app: app, peer: peer, location: isSave ? target : nil,
            contentType: contentType, length: length.flatMap { Int($0) })
    }

    /// Whether an app id counts as managed: bound in `apps.managed`, or unbound while
    /// `apps.unknown` is `trusted` (the same rule registration follows).
    func isManagedByPolicy(_ appId: String) -> Bool {
        host.policy.compiled.isManaged(appId)
    }

    static func wire(_ decision: PolicyDecision) -> CordonDecision {
        CordonDecision(
            allowed: decision.allowed, action: decision.action, reason: decision.reason,
            truncateTo: decision.truncationLimit,
            rules: decision.rules.map(\.description))
    }

    /// Decides one action and audits it as `check` does (every deny; allows when configured);
    /// `location` is a canonical path (a shared document's, whose extension `blockedTypes` checks).
    func decide(
        _ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?, location: String?
    ) -> PolicyDecision {
        let started = host.loop.now.uptimeNanoseconds
        let request = DecisionRequest(
            action: action, app: app, peer: peer, location: location, contentType: contentType, length: length)
        let decision = stale(host.policy.decide(request))
        auditDecision(decision, appId: app.id.isEmpty ? nil : app.id)
        host.configuration.metrics.decided(nanoseconds: host.loop.now.uptimeNanoseconds &- started)
        return decision
    }

    /// `decision`, denied while the fleet policy is stale and `conditions.policyStale` is `block`.
    func stale(_ decision: PolicyDecision) -> PolicyDecision {
        guard decision.allowed, let block = host.policyStaleBlock else { return decision }
        return PolicyDecision(allowed: false, action: decision.action, reason: block.reason, rules: block.rules)
    }

    /// The typed error for a denied decision.
    func denial(_ decision: PolicyDecision) -> CordonError {
        .denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules.map(\.description))
    }
}
