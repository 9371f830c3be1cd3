import CordonCore
import CordonProtocol
import Foundation
import NIOCore

extension Agent {
    /// Serves one call from `connection`.
    func dispatch(_ header: VarlinkCallHeader, message: Data, connection: AgentConnection) -> CallOutcome {
        loop.preconditionInEventLoop()
        let encoder = ReplyEncoder(allocator: connection.channel.allocator)
        if header.upgrade { return .reply(encoder.error(.methodNotImplemented(header.method))) }
        guard let method = Method(rawValue: header.method) else {
            if InterfaceDescriptions.all[header.interface] == nil {
                return .reply(encoder.error(.interfaceNotFound(header.interface)))
            }
            return .reply(encoder.error(.methodNotFound(header.method)))
        }
        do {
            return try serve(method, header: header, message: message, connection: connection, encoder: encoder)
        } catch {
            return .reply(encoder.error(error))
        }
    }

    private func serve(
        _ method: Method, header: VarlinkCallHeader, message: Data, connection: AgentConnection, encoder: ReplyEncoder
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
            return .reply(encoder.reply(ListAppsReply(apps: registry.all.map(\.info))))
        case .initialize:
            let parameters = try codec.decodeParameters(InitializeParameters.self, from: message)
            return request(.initializeRequested(passcodeLength: parameters.passcode.count, now: now), encoder) {
                $0.passcode = parameters.passcode
            }
        case .unlock:
            let parameters = try codec.decodeParameters(UnlockParameters.self, from: message)
            run(.activity(now: now))
            return request(.unlockRequested(hasPasscode: parameters.passcode != nil, now: now), encoder) {
                $0.passcode = parameters.passcode
            }
        case .changePasscode:
            let parameters = try codec.decodeParameters(ChangePasscodeParameters.self, from: message)
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
            return request(.wipeRequested(now: now), encoder)
        case .register:
            let parameters = try codec.decodeParameters(RegisterParameters.self, from: message)
            return .reply(try register(parameters.appId, connection: connection, encoder: encoder))
        case .subscribe:
            let parameters = try codec.decodeParameters(SubscribeParameters.self, from: message)
            guard header.more else { throw .expectedMore }
            do {
                try subscribe(connection, token: parameters.token)
            } catch {
                throw error.varlinkError
            }
            return .streaming
        case .acknowledge:
            let parameters = try codec.decodeParameters(AcknowledgeParameters.self, from: message)
            do {
                try registry.acknowledge(connection: connection.id, seq: parameters.seq, latestSeq: machine.seq)
            } catch {
                throw error.varlinkError
            }
            rescheduleTimer()
            return .reply(encoder.empty())
        case .getKey:
            return .reply(try appKey(for: connection, encoder: encoder))
        case .reportActivity:
            run(.activity(now: now))
            return .reply(encoder.empty())
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

    private func register(_ appId: String, connection: AgentConnection, encoder: ReplyEncoder) throws(VarlinkError)
        -> ByteBuffer
    {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", generator.next() as UInt8) }.joined()
        // Until policies bind app ids to executables, every registered app is managed.
        let registration = AppRegistration(
            connection: connection.id, appId: appId, pid: Int(connection.identity.pid),
            executable: connection.identity.executable, managed: true, token: token)
        do {
            try registry.register(registration)
        } catch {
            throw error.varlinkError
        }
        logger.info(
            "app registered",
            metadata: [
                "appId": "\(appId)", "pid": "\(connection.identity.pid)", "exe": "\(connection.identity.executable)",
            ])
        return encoder.reply(RegisterReply(appId: appId, managed: true, token: token))
    }

    private func appKey(for connection: AgentConnection, encoder: ReplyEncoder) throws(VarlinkError) -> ByteBuffer {
        guard let registration = registry.registrations[connection.id] else {
            throw CordonError.notRegistered.varlinkError
        }
        guard registration.managed else { throw CordonError.notManaged(appId: registration.appId).varlinkError }
        guard let master = masterKey else {
            throw CordonError.keyUnavailable(state: machine.state.rawValue).varlinkError
        }
        let key = custody.appKey(master: master, appId: registration.appId)
        defer { key.zero() }
        let encoded = key.withUnsafeBytes { Data($0).base64EncodedString() }
        return encoder.reply(GetKeyReply(key: encoded))
    }

    func status(now: Double) -> AgentStatus {
        let lifecycle = machine.configuration
        return AgentStatus(
            state: machine.state, seq: machine.seq, failedAttempts: machine.failedAttempts,
            maxAttempts: lifecycle.maxAttempts, retryAfterSeconds: machine.retryAfter(now: now),
            idleTimeoutSeconds: lifecycle.idleTimeoutSeconds, reauthGraceSeconds: lifecycle.reauthGraceSeconds,
            ackDeadlineMs: lifecycle.ackDeadlineMs, apps: registry.registrations.count,
            version: InterfaceDescriptions.version, insecureKDF: configuration.insecureFastKDF)
    }
}
