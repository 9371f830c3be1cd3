import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonSystem
import Logging
import NIOCore

/// The registered apps and the processes behind them (docs/ARCHITECTURE.md, "App identity"):
/// `Register` (`AppRegistrations+Register.swift`), the check before every key or data call that
/// the caller still is the process that registered (`AppRegistrations+Verify.swift`), `GetKey`,
/// `Acknowledge`, `ReportActivity`, `GetNetworkPolicy` and `ReportChannelCuts`
/// (`AppRegistrations+ChannelCuts.swift`).
final class AppRegistrations: AgentComponent {
    /// What registration needs of the agent.
    typealias Host = LifecycleDriver & PolicyProvider & AuditSink & KeySource & RegistrationHooks

    unowned let host: any Host
    /// The registrations, their tokens, subscribers and acknowledgement deadlines.
    var registry = AppRegistry()
    /// The process behind each registration, as it was when it registered.
    var processes: [ConnectionID: AppProcess] = [:]

    init(host: any Host) {
        self.host = host
    }

    var logger: Logger { host.logger }

    /// Forgets a closed connection's registration; true when it had one. Called after every other
    /// component heard of the close (they still read the registration then).
    func forget(_ id: ConnectionID) -> Bool {
        guard let registration = registry.registrations[id] else {
            processes.removeValue(forKey: id)
            return false
        }
        logger.info("app disconnected", metadata: ["appId": "\(registration.appId)", "pid": "\(registration.pid)"])
        registry.connectionClosed(id)
        processes.removeValue(forKey: id)
        return true
    }

    // MARK: - Methods

    /// `Acknowledge`: the app halted (or resumed) for the event `seq`.
    func serveAcknowledge(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(AcknowledgeParameters.self)
        let id = call.connection.id
        let revocationPending = registry.registrations[id]?.pendingSeq != nil
        do {
            try registry.acknowledge(connection: id, seq: parameters.seq, latestSeq: host.lastSeq)
        } catch {
            throw error.varlinkError
        }
        // A supervisor (`cordon run`) halted its program by freezing it: from now on the
        // agent holds that freeze until the key returns (docs/ARCHITECTURE.md, "Freezing").
        if revocationPending, parameters.status == .halted, processes[id]?.onBehalf == true,
            let app = registry.registrations[id]
        {
            host.holdSupervisorFreeze(app)
        }
        host.rescheduleTimer()
        return .reply(call.encoder.empty())
    }

    /// `ReportActivity`: only a verified managed app keeps the container unlocked (docs/THREAT-MODEL.md).
    func serveReportActivity(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        _ = try typed { () throws(CordonError) in try verifiedRegistration(call.connection, for: .activity) }
        host.run(.activity(now: host.clock()))
        return .reply(call.encoder.empty())
    }

    /// `GetKey`: the app's own key, to its own hardened managed process only.
    func serveGetKey(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let registration = try typed { () throws(CordonError) in
            try verifiedRegistration(call.connection, for: .key)
        }
        let state = host.lifecycleState
        // `storage.dataAccess: whenUnlocked`: the key is not handed out while locked.
        if state != .unlocked
            && host.policy.policy.forApp(registration.appId)[PolicyKeys.Storage.dataAccess].value == .whenUnlocked
        {
            throw CordonError.keyUnavailable(state: state.rawValue).varlinkError
        }
        guard let key = host.appKey(for: registration.appId) else {
            throw CordonError.keyUnavailable(state: state.rawValue).varlinkError
        }
        defer { key.zero() }
        // Base64 straight from locked memory into a frame zeroed once written: no Data,
        // String or encoder copy of the key is left in the heap.
        return .reply(SecretReply.key(key))
    }

    /// `GetNetworkPolicy`: the registered app's effective `network` policy from the policy in
    /// force now (docs/ARCHITECTURE.md, "Pinned channel"). Any registration may ask (managed or
    /// not, own or on a child's behalf: `cordon run --tunnel` enforces it for its program); a
    /// connection that registered nothing, and a token of another process, get `NotRegistered`
    /// and `InvalidToken` (docs/THREAT-MODEL.md).
    func serveNetworkPolicy(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(GetNetworkPolicyParameters.self)
        let policy = try typed { () throws(CordonError) in
            try networkPolicy(token: parameters.token, caller: call.connection)
        }
        return .reply(call.encoder.reply(NetworkPolicyReply(policy: policy)))
    }

    private func networkPolicy(token: String?, caller: AgentConnection) throws(CordonError) -> NetworkPolicy {
        let registration = try liveRegistration(token: token, caller: caller)
        let policy = host.policy.networkPolicy(appId: registration.appId)
        // The paths are checked here, where the policy is in force, not left to fail in the app.
        if let client = policy.clientCertificate { try ClientCertificateCheck.check(client) }
        return policy
    }

    /// The registration `caller` names: its own, or with `token` the one of another connection of
    /// the same process; `NotRegistered`, `InvalidToken`, and `ProcessChanged` once the registered
    /// process has exited.
    func liveRegistration(token: String?, caller: AgentConnection) throws(CordonError) -> AppRegistration {
        var connection = caller
        if let token {
            guard let owner = registry.connection(token: token, pid: Int(caller.identity.pid)),
                let registered = host.connection(owner)
            else { throw .invalidToken }
            connection = registered
        }
        guard let registration = registry.registrations[connection.id], let process = processes[connection.id]
        else { throw .notRegistered }
        if let pidfd = process.pidfd, !pidfd.isAlive {
            throw .processChanged(appId: registration.appId, reason: "the process has exited")
        }
        return registration
    }

    // MARK: - Posture revocations

    /// The device's posture revoked `appId`'s key (its `EncryptionKeyUnavailable` is queued): its
    /// registrations owe an acknowledgement by the policy's deadline, enforced as any other.
    func appKeyRevokedForPosture(_ appId: String) {
        let ms =
            host.policy.policy.forApp(appId)[PolicyKeys.Lock.ackDeadlineMs].value
            ?? host.lifecycle.configuration.ackDeadlineMs
        registry.appKeyRevoked(appId, seq: host.lastSeq, deadline: host.clock() + Double(ms) / 1000)
        host.rescheduleTimer()
    }

    /// The posture gave `appId`'s key back (its `EncryptionKeyAvailable` is queued): it owes
    /// nothing, and a registration frozen for a missed deadline thaws.
    func appKeyReturnedForPosture(_ appId: String) {
        host.thaw(registry.appKeyReturned(appId))
        host.rescheduleTimer()
    }
}

/// What registration needs of the agent beyond the common capabilities: the device's posture,
/// enforcement, the open connections and the other components' hooks.
protocol RegistrationHooks: AnyObject {
    /// The posture reading `appId`'s policy acts on (none when it acts on no check).
    func postureReading(for appId: String) -> EventLoopFuture<[PostureResult]>
    /// Refuses `appId` when the device's posture blocks it at registration (`block`, `wipe`).
    func admitPosture(_ appId: String, checks: [PostureResult]) throws(CordonError)
    /// Refuses a call of `appId` while a posture check set to block revoked its key.
    func checkPostureNotBlocked(_ appId: String) throws(CordonError)
    /// Connection `id`, while it is open.
    func connection(_ id: ConnectionID) -> AgentConnection?
    /// An app has just registered (before its reply is sent): every component hears it and
    /// enforcement tracks its process.
    func appRegistered(_ registration: AppRegistration, process: AppProcess)
    /// The registered apps changed: the lock settings follow them.
    func registeredAppsChanged()
    /// A supervisor halted its program by freezing it: the agent holds that freeze.
    func holdSupervisorFreeze(_ app: AppRegistration)
    /// Thaws apps frozen for a missed deadline.
    func thaw(_ apps: [AppRegistration])
    /// Re-arms the agent's timer after a deadline changed.
    func rescheduleTimer()
}
