import CordonLifecycle
import CordonProtocol
import CordonSystem
import NIOCore

extension Agent {
    /// Each call's round trip is recorded in the agent's metrics.
    var callMetrics: AgentMetrics? { configuration.metrics }

    /// Counts the registered apps by compliance into the metrics (`MetricsFileService`, before
    /// each write): noncompliant while a posture check blocked or warned them, unknown before the
    /// first reading.
    func recordAppMetrics() {
        loop.preconditionInEventLoop()
        var counts: [AgentMetrics.Compliance: Int] = [:]
        for registration in apps.registry.registrations.values {
            let appId = registration.appId
            let compliance: AgentMetrics.Compliance
            if posture.blocked[appId] != nil || !(posture.warned[appId] ?? []).isEmpty {
                compliance = .noncompliant
            } else {
                compliance = posture.hasReading ? .compliant : .unknown
            }
            counts[compliance, default: 0] += 1
        }
        configuration.metrics.apps(counts)
    }

    /// Admits a new identified connection, or returns why not.
    func connectionOpened(context: ChannelHandlerContext, identity: PeerIdentity, pidfd: Pidfd?) -> Result<
        AgentConnection, VarlinkError
    > {
        loop.preconditionInEventLoop()
        guard identity.uid == configuration.allowedUID else {
            logger.warning(
                "connection refused: another user",
                metadata: ["uid": "\(identity.uid)", "pid": "\(identity.pid)", "exe": "\(identity.executable)"])
            return .failure(.permissionDenied)
        }
        guard !isShuttingDown else { return .failure(CordonError.keyUnavailable(state: "shutdown").varlinkError) }
        let limit = configuration.limits.maxConnectionsPerUID
        guard connections.count < limit else {
            logger.warning("connection refused: limit reached", metadata: ["limit": "\(limit)"])
            return .failure(CordonError.tooManyConnections(limit: limit).varlinkError)
        }
        let perProcess = configuration.limits.maxConnectionsPerProcess
        guard connections(heldBy: identity.pid) < perProcess else {
            logger.warning(
                "connection refused: the process holds too many",
                metadata: ["pid": "\(identity.pid)", "exe": "\(identity.executable)", "limit": "\(perProcess)"])
            return .failure(
                CordonError.tooManyProcessConnections(pid: Int(identity.pid), limit: perProcess).varlinkError)
        }
        let connection = AgentConnection(id: nextConnectionID, identity: identity, pidfd: pidfd, context: context)
        nextConnectionID += 1
        connections[connection.id] = connection
        configuration.metrics.connections(connections.count)
        return .success(connection)
    }

    /// How many connections process `pid` holds: those its pid opened while the process that
    /// opened them still lives (checked through their pidfds, so connections left behind by a
    /// process that exited do not count against another that was given its pid).
    func connections(heldBy pid: Int32) -> Int {
        connections.values.reduce(0) { count, connection in
            guard connection.identity.pid == pid else { return count }
            return connection.pidfd?.isAlive ?? true ? count + 1 : count
        }
    }

    /// Whether connection `id` registered an app: then the idle timeout does not apply to it.
    func isRegistered(_ id: ConnectionID) -> Bool {
        apps.registry.registrations[id] != nil
    }

    /// Forgets everything a closed connection held.
    func connectionClosed(_ id: ConnectionID) {
        loop.preconditionInEventLoop()
        connections.removeValue(forKey: id)
        configuration.metrics.connections(connections.count)
        for component in components { component.connectionClosed(id) }
        if apps.forget(id) { registeredAppsChanged() }
    }

    /// Graceful shutdown: revoke (zero keys, tell every app), flush, then close every connection.
    func shutdown() -> EventLoopFuture<Void> {
        stopComponents()
        run(.revoke(reason: .shutdown, now: clock()))
        timer?.cancel()
        let closes = connections.values.map { connection -> EventLoopFuture<Void> in
            let channel = connection.channel
            return channel.writeAndFlush(ByteBuffer()).flatMap { channel.close() }.recover { _ in }
        }
        return EventLoopFuture.andAllComplete(closes, on: loop)
    }

    /// Stops what runs on its own (watchers, timers, the components' pending work) without
    /// revoking: after a start that failed (another agent holds the socket), when this agent
    /// served nothing and the database is the other agent's to change.
    func stopComponents() {
        loop.preconditionInEventLoop()
        guard !isShuttingDown else { return }
        isShuttingDown = true
        for component in components { component.shutdown() }
        timer?.cancel()
    }
}

extension Agent {
    /// Logs and audits a message written on connection `id` by a process other than the one that
    /// opened it; the handler refuses it and closes the connection.
    func foreignSender(_ sender: Int32, on id: ConnectionID) {
        loop.preconditionInEventLoop()
        let appId = apps.registry.registrations[id]?.appId
        let pid = connections[id]?.identity.pid ?? 0
        let reason = "process \(sender) wrote on the connection process \(pid) opened"
        logger.warning(
            "message refused: not written by the process that connected",
            metadata: ["appId": "\(appId ?? "-")", "pid": "\(pid)", "sender": "\(sender)"])
        writeAudit([
            AuditEntry(
                time: clock(), category: .decision, appId: appId, action: "app.message", outcome: "refused",
                reason: reason, rules: [])
        ])
    }
}
