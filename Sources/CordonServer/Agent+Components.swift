import CordonLifecycle
import CordonProtocol
import CordonStore
import NIOCore

extension Agent {
    /// Every component the agent hosts, in the order they observe events. Adding a component
    /// (storage, tokens, identity, posture) is its own files plus one line here.
    func makeComponents() -> [any AgentComponent] {
        [
            auditLog,
            policyHost,
            eventBus,
            PasteboardComponent(host: self),
            DocumentsComponent(host: self),
            UnlockPromptComponent(host: self),
            posture,
            storage,
            TokensComponent(host: self),
            IdentityComponent(host: self),
            enforcement,
            biometrics,
        ]
    }

    /// Which component serves each method; every method is served once.
    static func routes(of components: [any AgentComponent]) -> [Method: any AgentComponent] {
        var routes: [Method: any AgentComponent] = [:]
        for component in components {
            for method in component.methods {
                precondition(routes[method] == nil, "\(method.rawValue) is served by two components")
                routes[method] = component
            }
        }
        return routes
    }
}

extension Agent: ComponentHost {
    var lifecycleState: LifecycleState { machine.state }
    var lastSeq: Int { machine.seq }

    func subscriber(_ id: ConnectionID) -> Subscriber? { eventBus.subscriber(id) }

    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) { eventBus.deliver(frame, to: subscriber) }

    func snapshot() -> CordonEvent { machine.snapshot(now: clock()) }

    func bindSubscriber(token: String, connection: AgentConnection) throws(CordonError) {
        try registry.bindSubscriber(token: token, subscriber: connection.id, pid: Int(connection.identity.pid))
    }

    func policyApplied() { machine.configuration = lifecycleConfiguration(from: policy.policy) }

    func subscriberBound(_ id: ConnectionID) {
        guard let registration = registry.registrations.values.first(where: { $0.subscriber == id }) else { return }
        posture.subscribed(registration)
    }

    @discardableResult
    func wipeAppData(_ appId: String, reason: String) -> EventLoopFuture<Void> { storage.wipe(appId, reason: reason) }

    func recordEnforcement(_ id: ConnectionID, _ action: EnforcementAction) { registry.enforced(id, action) }

    func closeConnection(_ id: ConnectionID) { connections[id]?.channel.close(promise: nil) }

    @discardableResult
    func writeAudit(_ records: [AuditEntry], onDisk: Bool) -> EventLoopFuture<Void> {
        auditLog.write(records, onDisk: onDisk)
    }

    func auditStored() -> EventLoopFuture<Void> { auditLog.stored() }
}
