import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Logging
import NIOCore
import NIOPosix

/// What a component may use of the agent that hosts it, as small capabilities: each component
/// names the ones it needs (`PasteboardComponent.Host`), the agent provides them all, and a unit
/// test gives a component fakes of just those (docs/ARCHITECTURE.md, "Components").
///
/// A component reads the rest of the agent through these, and changes it only by feeding the
/// lifecycle an input or asking for a write; it never touches another component's state.
typealias ComponentHost = AgentEnvironment & PolicyProvider & LifecycleDriver & AuditSink & Decider
    & RegistrationVerifier & KeySource & EventSink & AppDataWiper & PolicyStaleGate

/// What every component runs with: the loop, the settings, the log, the clock, the store and its pool.
protocol AgentEnvironment: AnyObject {
    /// The one event loop everything runs on.
    var loop: any EventLoop { get }
    var configuration: AgentConfiguration { get }
    var logger: Logger { get }
    var clock: @Sendable () -> Double { get }
    var database: CordonDatabase { get }
    /// Serial: store writes and key derivations, one at a time, in order.
    var storePool: NIOThreadPool { get }
}

/// The policy in force.
protocol PolicyProvider: AnyObject {
    /// The policy in force, compiled for decisions.
    var policy: PolicyEvaluator { get }
    /// A new policy is in force: the lifecycle takes its settings.
    func policyApplied()
}

/// The lifecycle machine: its state, and how a component feeds it an input.
protocol LifecycleDriver: AgentEnvironment {
    /// The container's state and the sequence number of its last event.
    var lifecycleState: LifecycleState { get }
    var lastSeq: Int { get }
    /// The machine as it is now (failed attempts, the check in flight, its settings).
    var lifecycle: LifecycleMachine { get }
    /// The agent is stopping (every key is being revoked, every connection closed).
    var isShuttingDown: Bool { get }
    /// Feeds the lifecycle machine and performs what it says; `request` is answered by it.
    func run(_ input: LifecycleInput, request: LifecycleRequest?)
    /// The current state as the event a new subscriber gets first.
    func snapshot() -> CordonEvent
}

/// The audit log.
protocol AuditSink: AnyObject {
    /// Queues audit records; completes once they are stored (or their write failed): on the disk,
    /// or with `onDisk` false only where a killed agent cannot lose them (`appendAudit(_:onDisk:)`:
    /// for the records of routine reads, docs/THREAT-MODEL.md, "Audit").
    @discardableResult
    func writeAudit(_ records: [AuditEntry], onDisk: Bool) -> EventLoopFuture<Void>
    /// Completes once every record queued so far is stored.
    func auditStored() -> EventLoopFuture<Void>
    /// Queues a routine read's records to be stored after its reply (a group commit within a
    /// bounded delay; `AuditLogComponent.writeAfterReply(_:)`): nil when the reply may leave now,
    /// else (the queue is full) the future it waits for.
    func auditAfterReply(_ records: [AuditEntry]) -> EventLoopFuture<Void>?
}

/// Policy decisions, audited.
protocol Decider: AnyObject {
    /// The caller as the policy sees it: its registration, or an unmanaged nobody.
    func appFacts(of connection: AgentConnection) -> AppFacts
    /// Whether the policy manages `appId` (bound, or nothing is bound and unknown apps are managed).
    func isManagedByPolicy(_ appId: String) -> Bool
    /// Decides one action and audits it (every deny; allows when configured); `location` is the
    /// canonical path of a shared document.
    func decide(
        _ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?, location: String?
    ) -> PolicyDecision
    /// The typed error for a denied decision.
    func denial(_ decision: PolicyDecision) -> CordonError
    /// A decision request for the action named `name`; the peer is managed when the policy binds it.
    func decisionRequest(action name: String, app: AppFacts, target: String?, context: [String: String]?)
        throws(CordonError) -> DecisionRequest
}

/// The registered apps, and each call's check that the caller still is the app it registered as.
protocol RegistrationVerifier: AnyObject {
    /// The registered apps.
    var registry: AppRegistry { get }
    /// The registration a token names on another connection of the same process, verified for `use`.
    func verifiedRegistration(token: String?, caller: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    /// The registration of `connection`, verified again for `use` (`AppRegistrations+Verify.swift`).
    func verifiedRegistration(_ connection: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    /// Binds the subscriber on `connection` to the registration whose token it presents.
    func bindSubscriber(token: String, connection: AgentConnection) throws(CordonError)
    /// Records in the app registry what enforcement did to the app on connection `id`.
    func recordEnforcement(_ id: ConnectionID, _ action: EnforcementAction)
    /// The device's posture revoked `appId`'s key: an acknowledgement is owed by the deadline.
    func appKeyRevokedForPosture(_ appId: String)
    /// The posture gave `appId`'s key back: nothing is owed, a frozen registration thaws.
    func appKeyReturnedForPosture(_ appId: String)
    /// Closes connection `id`.
    func closeConnection(_ id: ConnectionID)
}

/// App keys and keys derived from the master key, while it is held (`KeyVault`).
protocol KeySource: AnyObject {
    /// `appId`'s random key (made and stored the first time), or nil when the master key is not
    /// held. The caller zeroes it.
    func appKey(for appId: String) -> SecureBytes?
    /// A selective wipe starts destroying `appId`'s key: it is zeroed and none is handed out.
    func destroyingAppKey(_ appId: String)
    /// The selective wipe of `appId`'s key ended (`failed`: perhaps before its row was deleted).
    func appKeyDestroyed(_ appId: String, failed: Bool)
    /// The key for `purpose` (`KeyCustody.purposeKey`), or nil when the master key is not held.
    /// The caller zeroes it.
    func purposeKey(_ purpose: [String]) -> SecureBytes?
}

/// The event bus's subscribers.
protocol EventSink: AnyObject {
    /// The subscriber streaming on connection `id`, if any.
    func subscriber(_ id: ConnectionID) -> Subscriber?
    /// Writes `frame` to a subscriber now, or queues it; a full queue disconnects it.
    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber)
    /// A subscriber on connection `id` just got its first event (the state snapshot).
    func subscriberBound(_ id: ConnectionID)
}

/// The selective wipe of one app's data (`StorageComponent+Wipe.swift`).
protocol AppDataWiper: AnyObject {
    /// Crypto-erases `appId`'s data.
    @discardableResult
    func wipeAppData(_ appId: String, reason: String) -> EventLoopFuture<Void>
}

/// `conditions.policyStale: block` (`FleetComponent+Staleness.swift`).
protocol PolicyStaleGate: AnyObject {
    /// What every decision is denied with now, or nil while the fleet policy is fresh (or the
    /// setting is not `block`).
    var policyStaleBlock: PolicyStaleBlock? { get }
}

extension AuditSink {
    /// Queues audit records; completes once they are on the disk (or their write failed).
    @discardableResult
    func writeAudit(_ records: [AuditEntry]) -> EventLoopFuture<Void> { writeAudit(records, onDisk: true) }

    /// Runs `body`; a refusal is answered only once its audit record is stored.
    func afterAudit(_ encoder: ReplyEncoder, _ body: () throws(CordonError) -> ByteBuffer) -> CallOutcome {
        do {
            return .reply(try body())
        } catch {
            let reply = encoder.error(error.varlinkError)
            return .deferred(auditStored().map { reply })
        }
    }
}

extension Decider {
    /// Decides one action that concerns no file, and audits it.
    func decide(_ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?)
        -> PolicyDecision
    {
        decide(action, app: app, peer: peer, length: length, contentType: contentType, location: nil)
    }
}

extension LifecycleDriver {
    /// Feeds the lifecycle machine an input no call waits on.
    func run(_ input: LifecycleInput) { run(input, request: nil) }
}
