import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import NIOCore

/// The capabilities components use (`ComponentHost.swift`), each provided by the component that
/// owns it: the agent only forwards (docs/ARCHITECTURE.md, "Components").
extension Agent: AgentEnvironment, PolicyProvider, LifecycleDriver, AuditSink, Decider, RegistrationVerifier,
    KeySource, EventSink, AppDataWiper, PolicyStaleGate
{
    // MARK: LifecycleDriver

    var lifecycleState: LifecycleState { machine.state }
    var lastSeq: Int { machine.seq }
    var lifecycle: LifecycleMachine { machine }

    func snapshot() -> CordonEvent { machine.snapshot(now: clock()) }

    // MARK: PolicyProvider

    func policyApplied() { machine.configuration = lifecycleConfiguration(from: policy.policy) }

    // MARK: AuditSink

    @discardableResult
    func writeAudit(_ records: [AuditEntry], onDisk: Bool) -> EventLoopFuture<Void> {
        auditLog.write(records, onDisk: onDisk)
    }

    func auditStored() -> EventLoopFuture<Void> { auditLog.stored() }
    func auditAfterReply(_ records: [AuditEntry]) -> EventLoopFuture<Void>? { auditLog.writeAfterReply(records) }

    // MARK: Decider

    func appFacts(of connection: AgentConnection) -> AppFacts { decisions.appFacts(of: connection) }

    func isManagedByPolicy(_ appId: String) -> Bool { decisions.isManagedByPolicy(appId) }

    func decide(
        _ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?, location: String?
    ) -> PolicyDecision {
        decisions.decide(action, app: app, peer: peer, length: length, contentType: contentType, location: location)
    }

    func denial(_ decision: PolicyDecision) -> CordonError { decisions.denial(decision) }

    func decisionRequest(action name: String, app: AppFacts, target: String?, context: [String: String]?)
        throws(CordonError) -> DecisionRequest
    {
        try decisions.decisionRequest(action: name, app: app, target: target, context: context)
    }

    // MARK: RegistrationVerifier

    var registry: AppRegistry { apps.registry }

    func verifiedRegistration(token: String?, caller: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        try apps.verifiedRegistration(token: token, caller: caller, for: use)
    }

    func verifiedRegistration(_ connection: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        try apps.verifiedRegistration(connection, for: use)
    }

    func bindSubscriber(token: String, connection: AgentConnection) throws(CordonError) {
        try apps.registry.bindSubscriber(token: token, subscriber: connection.id, pid: Int(connection.identity.pid))
    }

    func recordEnforcement(_ id: ConnectionID, _ action: EnforcementAction) { apps.registry.enforced(id, action) }

    func appKeyRevokedForPosture(_ appId: String) { apps.appKeyRevokedForPosture(appId) }

    func appKeyReturnedForPosture(_ appId: String) { apps.appKeyReturnedForPosture(appId) }

    func closeConnection(_ id: ConnectionID) { connections[id]?.channel.close(promise: nil) }

    // MARK: KeySource

    func appKey(for appId: String) -> SecureBytes? { vault.appKey(for: appId) }

    func destroyingAppKey(_ appId: String) { vault.destroyingAppKey(appId) }

    func appKeyDestroyed(_ appId: String, failed: Bool) { vault.appKeyDestroyed(appId, failed: failed) }

    func purposeKey(_ purpose: [String]) -> SecureBytes? { vault.purposeKey(purpose) }

    // MARK: EventSink

    func subscriber(_ id: ConnectionID) -> Subscriber? { eventBus.subscriber(id) }

    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) { eventBus.deliver(frame, to: subscriber) }

    func subscriberBound(_ id: ConnectionID) {
        guard let registration = apps.registry.registrations.values.first(where: { $0.subscriber == id }) else {
            return
        }
        posture.subscribed(registration)
    }

    // MARK: PolicyStaleGate

    var policyStaleBlock: PolicyStaleBlock? { fleet.policyStaleBlock }

    // MARK: AppDataWiper

    @discardableResult
    func wipeAppData(_ appId: String, reason: String) -> EventLoopFuture<Void> { storage.wipe(appId, reason: reason) }
}

/// Registration's hooks into the posture, enforcement, the connections and the other components.
extension Agent: RegistrationHooks {
    func postureReading(for appId: String) -> EventLoopFuture<[PostureResult]> {
        // Read only when the app's policy acts on a check: a reading may run programs and take seconds.
        policy.actsOnPosture(appId: appId) ? posture.current() : loop.makeSucceededFuture([])
    }

    func admitPosture(_ appId: String, checks: [PostureResult]) throws(CordonError) {
        try posture.admit(appId, checks: checks)
    }

    func checkPostureNotBlocked(_ appId: String) throws(CordonError) { try posture.checkNotBlocked(appId) }

    func connection(_ id: ConnectionID) -> AgentConnection? { connections[id] }

    func appRegistered(_ registration: AppRegistration, process: AppProcess) {
        for component in components { component.registered(registration, process: process) }
        if let pidfd = process.pidfd {
            enforcement.track(
                registration.connection, appId: registration.appId, process: pidfd, pid: process.identity.pid,
                onBehalf: process.onBehalf, registrar: Int32(registration.ownerPid))
        }
    }

    func holdSupervisorFreeze(_ app: AppRegistration) { enforcement.holdSupervisorFreeze(app) }

    func thaw(_ apps: [AppRegistration]) { enforcement.thaw(apps) }
}

/// The lock triggers' hooks into the settings, the posture and the event bus.
extension Agent: LockTriggerHooks {
    func containerSettingsNow() -> EffectivePolicySettings { containerSettings() }

    func refreshPosture(why: String) { _ = posture.refresh(why: why) }

    func eventsWritten() -> EventLoopFuture<Void> { eventBus.flushed() }
}
