import CordonLifecycle
import CordonProtocol
import NIOCore

/// Routing: every call goes to what serves it in one switch over the interfaces, and over the
/// methods of an interface several components serve (`io.cordon.Agent`, `io.cordon.App`). No
/// switch has a `default:`: a method added to `Method` without a route or a handler does not
/// compile (docs/ARCHITECTURE.md, "The path of a call").
extension Agent {
    /// Serves one call from `connection`.
    func dispatch(_ message: VarlinkCallMessage, connection: AgentConnection) -> CallOutcome {
        loop.preconditionInEventLoop()
        let header = message.header
        let encoder = ReplyEncoder(allocator: connection.channel.allocator)
        if header.upgrade { return .reply(encoder.error(.methodNotImplemented(header.method))) }
        guard let method = Method.named(header.method) else {
            if InterfaceDescriptions.all[header.interface] == nil {
                return .reply(encoder.error(.interfaceNotFound(header.interface)))
            }
            return .reply(encoder.error(.methodNotFound(header.method)))
        }
        do {
            return try route(ComponentCall(method: method, message: message, connection: connection, encoder: encoder))
        } catch {
            return .reply(encoder.error(error))
        }
    }

    private func route(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        switch call.method {
        case .service(let method): return try serve(method, call)
        case .agent(let method): return try route(method, call)
        case .app(let method): return try route(method, call)
        case .pasteboard(let method): return try pasteboard.serve(method, call)
        case .policy(let method): return try policyHost.serve(method, call)
        case .audit(let method): return try auditLog.serve(method, call)
        case .posture(let method): return try posture.serve(method, call)
        case .storage(let method): return try storage.serve(method, call)
        case .tokens(let method): return try tokens.serve(method, call)
        case .identity(let method): return try identity.serve(method, call)
        }
    }

    /// `io.cordon.Agent`: the lifecycle (the agent's own), the key (the vault), fingerprints.
    private func route(_ method: Method.Agent, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        switch method {
        case .getStatus:
            // A TPM-sealed key's state (lockout, the bound PCRs) is read afresh: a change is seen
            // before any unlock.
            guard let refreshed = vault.refreshedKeyProtection() else {
                return .reply(encoder.reply(StatusReply(status: status(now: clock()))))
            }
            return .deferred(
                refreshed.assumeIsolated().map { [self] in encoder.reply(StatusReply(status: status(now: clock()))) }
                    .nonisolated())
        case .listApps: return .reply(encoder.reply(ListAppsReply(apps: enforcement.appInfos())))
        case .lock: return request(.lock(reason: .userRequest, now: clock()), encoder)
        case .logout: return request(.revoke(reason: .logout, now: clock()), encoder)
        case .initialize: return try vault.serveInitialize(call)
        case .unlock: return try vault.serveUnlock(call)
        case .changePasscode: return try vault.serveChangePasscode(call)
        case .wipe: return try vault.serveWipe(call)
        case .recover: return try vault.serveRecover(call)
        case .unlockWithFingerprint: return try vault.biometrics.serveUnlock(call)
        case .setBiometrics: return try vault.biometrics.serveSetBiometrics(call)
        }
    }

    /// `io.cordon.App`: registration, events, decisions, documents, the unlock prompt.
    private func route(_ method: Method.App, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        switch method {
        case .register: return try apps.serveRegister(call)
        case .acknowledge: return try apps.serveAcknowledge(call)
        case .getKey: return try apps.serveGetKey(call)
        case .reportActivity: return try apps.serveReportActivity(call)
        case .getNetworkPolicy: return try apps.serveNetworkPolicy(call)
        case .reportChannelCuts: return try apps.serveReportChannelCuts(call)
        case .check: return try decisions.serveCheck(call)
        case .subscribe: return try eventBus.serveSubscribe(call)
        case .requestUnlock: return try unlockPrompt.serveRequestUnlock(call)
        case .shareDocument: return try documents.serveShare(call)
        case .openDocument: return try documents.serveOpen(call)
        }
    }

    /// `org.varlink.service`.
    private func serve(_ method: Method.Service, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        switch method {
        case .getInfo:
            return .reply(
                call.encoder.reply(
                    ServiceInfo(
                        vendor: "Cordon", product: "cordond", version: InterfaceDescriptions.version,
                        url: "https://cordon.invalid/docs", interfaces: InterfaceDescriptions.names)))
        case .getInterfaceDescription:
            let parameters = try call.parameters(InterfaceDescriptionParameters.self)
            guard let description = InterfaceDescriptions.all[parameters.interface] else {
                throw .interfaceNotFound(parameters.interface)
            }
            return .reply(call.encoder.reply(InterfaceDescriptionReply(description: description)))
        }
    }

    /// The status `GetStatus` answers and the service manager shows.
    func status(now: Double) -> AgentStatus {
        let lifecycle = machine.configuration
        return AgentStatus(
            state: machine.state, seq: machine.seq, failedAttempts: machine.failedAttempts,
            maxAttempts: lifecycle.maxAttempts, retryAfterSeconds: machine.retryAfter(now: now),
            idleTimeoutSeconds: lifecycle.idleTimeoutSeconds, reauthGraceSeconds: lifecycle.reauthGraceSeconds,
            ackDeadlineMs: lifecycle.ackDeadlineMs, apps: apps.registry.registrations.count,
            version: InterfaceDescriptions.version, insecureKDF: configuration.insecureFastKDF,
            lockTriggers: lockTriggers.active, auditProblem: auditLog.problem,
            testMode: configuration.testMode ? true : nil, keyProtection: vault.protectionStatus,
            onMaxAttempts: lifecycle.onMaxAttempts.rawValue, fleet: fleet.status(now: now))
    }
}
