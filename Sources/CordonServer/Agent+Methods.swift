import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore

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
            if let component = routes[method] {
                return try component.serve(
                    ComponentCall(method: method, message: message, connection: connection, encoder: encoder))
            }
            return try serve(method, header: header, message: message, connection: connection, encoder: encoder)
        } catch {
            return .reply(encoder.error(error))
        }
    }

    private func serve(
        _ method: Method, header: VarlinkCallHeader, message: VarlinkCallMessage, connection: AgentConnection,
        encoder: ReplyEncoder
    ) throws(VarlinkError) -> CallOutcome {
        let codec = VarlinkCodec()
        let now = clock()
        switch method {
        case .getInfo:
            return .reply(
                encoder.reply(
                    ServiceInfo(
                        vendor: "Cordon", product: "cordond", version: InterfaceDescriptions.version,
                        url: "https://cordon.invalid/docs", interfaces: InterfaceDescriptions.names)))
        case .getInterfaceDescription:
            let parameters = try codec.decodeParameters(InterfaceDescriptionParameters.self, from: message)
            guard let description = InterfaceDescriptions.all[parameters.interface] else {
                throw .interfaceNotFound(parameters.interface)
            }
            return .reply(encoder.reply(InterfaceDescriptionReply(description: description)))
        case .getStatus:
            return .reply(encoder.reply(StatusReply(status: status(now: now))))
        case .listApps:
            return .reply(encoder.reply(ListAppsReply(apps: enforcement.appInfos())))
        case .initialize:
            let parameters = try codec.decodeParameters(InitializeParameters.self, from: message)
            if let problem = passcodeRules.problem(with: parameters.passcode) {
                throw CordonError.invalidPasscode(reason: problem).varlinkError
            }
            return request(.initializeRequested(passcodeLength: parameters.passcode.count, now: now), encoder) {
                $0.passcode = parameters.passcode
            }
        case .unlock:
            let parameters = try codec.decodeParameters(UnlockParameters.self, from: message)
            // Without the passcode (the re-authentication grace), only a verified managed app may
            // unlock: any other client must give the passcode (docs/THREAT-MODEL.md).
            if parameters.passcode == nil {
                do throws(CordonError) {
                    _ = try verifiedRegistration(connection, for: .activity)
                } catch {
                    throw CordonError.passcodeRequired.varlinkError
                }
            }
            run(.activity(now: now))
            return request(.unlockRequested(hasPasscode: parameters.passcode != nil, now: now), encoder) {
                $0.passcode = parameters.passcode
            }
        case .changePasscode:
            let parameters = try codec.decodeParameters(ChangePasscodeParameters.self, from: message)
            if let problem = passcodeRules.problem(with: parameters.new) {
                throw CordonError.invalidPasscode(reason: problem).varlinkError
            }
            return request(.changePasscodeRequested(newPasscodeLength: parameters.new.count, now: now), encoder) {
                $0.passcode = parameters.old
                $0.newPasscode = parameters.new
            }
        case .lock:
            return request(.lock(reason: .userRequest, now: now), encoder)
        case .logout:
            return request(.revoke(reason: .logout, now: now), encoder)
        case .wipe:
            let parameters = try codec.decodeParameters(WipeParameters.self, from: message)
            guard parameters.confirm else { throw .invalidParameter("confirm") }
            return request(.wipeRequested(hasPasscode: parameters.passcode != nil, now: now), encoder) {
                $0.passcode = parameters.passcode
            }
        case .register:
            let parameters = try codec.decodeParameters(RegisterParameters.self, from: message)
            return register(parameters.appId, pid: parameters.pid, connection: connection, encoder: encoder)
        case .acknowledge:
            let parameters = try codec.decodeParameters(AcknowledgeParameters.self, from: message)
            let revocationPending = registry.registrations[connection.id]?.pendingSeq != nil
            do {
                try registry.acknowledge(connection: connection.id, seq: parameters.seq, latestSeq: machine.seq)
            } catch {
                throw error.varlinkError
            }
            // A supervisor (`cordon run`) halted its program by freezing it: from now on the
            // agent holds that freeze until the key returns (docs/ARCHITECTURE.md, "Freezing").
            if revocationPending, parameters.status == .halted, processes[connection.id]?.onBehalf == true,
                let app = registry.registrations[connection.id]
            {
                enforcement.holdSupervisorFreeze(app)
            }
            rescheduleTimer()
            return .reply(encoder.empty())
        case .getKey:
            return .reply(try appKey(for: connection, encoder: encoder))
        case .reportActivity:
            // Only a verified managed app keeps the container unlocked (docs/THREAT-MODEL.md).
            _ = try typed { () throws(CordonError) in try verifiedRegistration(connection, for: .activity) }
            run(.activity(now: now))
            return .reply(encoder.empty())
        case .check:
            let parameters = message.parameters.flatMap { $0 == .null ? nil : $0 } ?? .object([])
            // `CheckParameters` is decoded only for a call `CheckCall` refuses: its error names the parameter.
            let call =
                if let read = CheckCall(readingJSON: parameters) { read } else {
                    CheckCall(try codec.decodeParameters(CheckParameters.self, from: message))
                }
            let (decision, stored) = try typed { () throws(CordonError) in try check(call, connection: connection) }
            let reply = encoder.reply(CheckReply(decision: decision))
            // An audited decision is answered once its record is stored.
            guard let stored else { return .reply(reply) }
            return .deferred(stored.map { reply })
        case .subscribe, .requestUnlock, .shareDocument, .openDocument, .copy, .paste, .clear, .queryAudit,
            .followAudit, .getPosture, .postureReport, .postureKey,
            .getEffectivePolicy,
            .validatePolicy, .explainPolicy, .reloadPolicy, .getPolicyStatus,
            // MARK: Storage (#13)
            .storagePut, .storageGet, .storageDelete, .storageList, .storageUsage, .storageWipeApp,
            .storageExportIdentity,
            // MARK: Tokens (#14)
            .tokenImport, .tokenList, .tokenCode, .tokenRename, .tokenRemove, .tokenReset:
            // Served by their components (`Agent+Components.swift`); never reaches here.
            throw .methodNotFound(header.method)
        // MARK: Pinned channel
        case .getNetworkPolicy:
            let parameters = try codec.decodeParameters(GetNetworkPolicyParameters.self, from: message)
            let policy = try typed { () throws(CordonError) in
                try networkPolicy(token: parameters.token, caller: connection)
            }
            return .reply(encoder.reply(NetworkPolicyReply(policy: policy)))
        // MARK: Recovery key (#12)
        case .recover:
            let parameters = try codec.decodeParameters(RecoverParameters.self, from: message)
            return try recover(parameters, encoder: encoder, now: now)
        // MARK: Fingerprint unlock (#15)
        case .unlockWithFingerprint, .setBiometrics,
            // MARK: Identity broker (#15)
            .identityGetToken, .identitySignIn, .identitySignOut, .identityStatus:
            // Served by `BiometricsComponent` and `IdentityComponent`; never reaches here.
            throw .methodNotFound(header.method)
        }
    }

    /// Runs a lifecycle request; answers at once, or later for passcode checks.
    private func request(
        _ input: LifecycleInput, _ encoder: ReplyEncoder, _ configure: (inout RequestContext) -> Void = { _ in }
    ) -> CallOutcome {
        var context = RequestContext(promise: loop.makePromise(), encoder: encoder)
        configure(&context)
        run(input, request: context)
        return .deferred(context.promise.futureResult)
    }

    /// Registers the app on `connection` as the policy says: managed (gets its key), unmanaged
    /// (state events only) or refused; a condition set to `wipe` wipes the container. With `pid`,
    /// the app is that child process of the caller (`cordon run`).
    private func register(_ appId: String, pid: Int?, connection: AgentConnection, encoder: ReplyEncoder)
        -> CallOutcome
    {
        if let problem = AppIdentifier.problem(with: appId) {
            return .reply(encoder.error(CordonError.invalidAppId(appId: appId, reason: problem).varlinkError))
        }
        if let existing = registry.registrations[connection.id] {
            return .reply(encoder.error(CordonError.alreadyRegistered(appId: existing.appId).varlinkError))
        }
        let process: AppProcess
        do throws(CordonError) {
            process = try AppProcess.resolve(pid: pid, connection: connection, allowedUID: configuration.allowedUID)
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        // What the pool's thread needs is read here, on the loop: the work below captures no agent state.
        let binding = policy.policy.managedApps[appId]?.value
        let needsDigest = binding?.sha256 != nil
        let identity = process.identity
        let user = configuration.allowedUID
        let installations = configuration.flatpakInstallations
        let facts = storePool.runIfActive(eventLoop: loop) {
            Self.registrationFacts(
                appId: appId, identity: identity, needsDigest: needsDigest, bound: binding != nil, user: user,
                flatpakInstallations: installations)
        }
        // The device's posture, read off the loop too (docs/ARCHITECTURE.md, "Posture"), and only
        // when the app's policy acts on a check: a reading may run programs and take seconds.
        let reading =
            policy.actsOnPosture(appId: appId) ? posture.current() : loop.makeSucceededFuture([PostureResult]())
        return .deferred(
            facts.and(reading).assumeIsolated().flatMap { [self] facts, checks in
                let reply: ByteBuffer
                do throws(CordonError) {
                    reply = encoder.reply(
                        try completeRegistration(facts, checks: checks, process: process, connection: connection))
                } catch {
                    reply = encoder.error(error.varlinkError)
                }
                // Answered once its audit record (a refusal, a warning) is stored.
                return auditStored().map { reply }
            }.nonisolated())
    }

    private func completeRegistration(
        _ facts: RegistrationFacts, checks: [PostureResult], process: AppProcess, connection: AgentConnection
    ) throws(CordonError) -> RegisterReply {
        let decision = policy.register(facts)
        let identity = process.identity
        // The facts were read off the loop: the process must still be the one they describe.
        if let change = process.fingerprint?.change(to: ProcessFingerprint.read(pid: identity.pid)) {
            throw .invalidProcess(pid: Int(identity.pid), reason: change)
        }
        let metadata: Logger.Metadata = [
            "appId": "\(facts.appId)", "pid": "\(identity.pid)", "exe": "\(identity.executable)",
            "outcome": "\(decision.outcome.rawValue)", "reason": "\(decision.reason)",
        ]
        for warning in decision.warnings { logger.warning("registration condition: \(warning)", metadata: metadata) }
        if decision.outcome != .managed || decision.wipe || !decision.warnings.isEmpty || configuration.auditAllows {
            writeAudit([
                AuditEntry(
                    time: clock(), category: .decision, appId: facts.appId, action: PolicyAction.appRegister.rawValue,
                    outcome: decision.outcome.rawValue, reason: decision.reason,
                    rules: decision.rules.map(\.description))
            ])
        }
        if decision.wipe {
            logger.critical("a policy condition wipes the container", metadata: metadata)
            run(.forceWipe(reason: .policy, now: clock()))
        }
        guard decision.outcome != .refused else {
            logger.warning("app refused by policy", metadata: metadata)
            throw .refused(appId: facts.appId, reason: decision.reason)
        }
        // The device's posture: `block` refuses, `wipe` erases the app's data and refuses.
        try posture.admit(facts.appId, checks: checks)
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", generator.next() as UInt8) }.joined()
        let managed = decision.outcome == .managed
        guard connections[connection.id] != nil else { throw .notRegistered }
        // One live registration per managed app: a second is refused while the first's process lives.
        if managed,
            let other = registry.registrations.values.first(where: {
                $0.managed && $0.appId == facts.appId && $0.connection != connection.id
            }), processes[other.connection]?.pidfd?.isAlive ?? true
        {
            logger.warning("app refused: already registered", metadata: metadata)
            throw .appIdInUse(appId: facts.appId, pid: other.pid)
        }
        try registry.register(
            AppRegistration(
                connection: connection.id, appId: facts.appId, pid: Int(identity.pid),
                ownerPid: Int(connection.identity.pid), executable: identity.executable, managed: managed, token: token)
        )
        var registered = process
        registered.injection = facts.injection
        processes[connection.id] = registered
        if let registration = registry.registrations[connection.id] {
            for component in components { component.registered(registration, process: registered) }
        }
        if let pidfd = process.pidfd {
            enforcement.track(
                connection.id, appId: facts.appId, process: pidfd, pid: identity.pid, onBehalf: process.onBehalf,
                registrar: connection.identity.pid)
        }
        logger.info("app registered", metadata: metadata)
        registeredAppsChanged()
        return RegisterReply(appId: facts.appId, managed: managed, token: token)
    }

    private func appKey(for connection: AgentConnection, encoder: ReplyEncoder) throws(VarlinkError) -> ByteBuffer {
        let registration = try typed { () throws(CordonError) in try verifiedRegistration(connection, for: .key) }
        guard let master = masterKey else {
            throw CordonError.keyUnavailable(state: machine.state.rawValue).varlinkError
        }
        // `storage.dataAccess: whenUnlocked`: the key is not handed out while locked.
        if machine.state != .unlocked
            && policy.policy.forApp(registration.appId)[PolicyKeys.Storage.dataAccess].value == .whenUnlocked
        {
            throw CordonError.keyUnavailable(state: machine.state.rawValue).varlinkError
        }
        let key = custody.appKey(
            master: master, appId: registration.appId, generation: appGenerations[registration.appId] ?? 0)
        defer { key.zero() }
        // Base64 straight from locked memory into a frame zeroed once written: no Data,
        // String or encoder copy of the key is left in the heap.
        return SecretReply.key(key)
    }

    func status(now: Double) -> AgentStatus {
        let lifecycle = machine.configuration
        return AgentStatus(
            state: machine.state, seq: machine.seq, failedAttempts: machine.failedAttempts,
            maxAttempts: lifecycle.maxAttempts, retryAfterSeconds: machine.retryAfter(now: now),
            idleTimeoutSeconds: lifecycle.idleTimeoutSeconds, reauthGraceSeconds: lifecycle.reauthGraceSeconds,
            ackDeadlineMs: lifecycle.ackDeadlineMs, apps: registry.registrations.count,
            version: InterfaceDescriptions.version, insecureKDF: configuration.insecureFastKDF,
            lockTriggers: activeLockTriggers, auditProblem: auditLog.problem,
            testMode: configuration.testMode ? true : nil, keyProtection: keyProtection)
    }
}
