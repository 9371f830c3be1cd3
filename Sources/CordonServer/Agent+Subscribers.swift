import CordonLifecycle
import CordonProtocol
import NIOCore

extension Agent {
    /// Sends `event` to every subscriber, encoded once and shared by all of them.
    func broadcast(_ event: WireEvent) {
        let fallbackMs = machine.configuration.ackDeadlineMs
        let thawed = registry.eventEmitted(event) { [policy] app in
            // An override may give one app another deadline than the one on the wire.
            let ms = policy.policy.forApp(app.appId).lock.ackDeadlineMs.value ?? fallbackMs
            return event.time + Double(ms) / 1000
        }
        // Frozen apps resume only after their key event is queued to them.
        defer { enforcement.thaw(thawed) }
        for component in components { component.observe(event) }
        logger.info(
            "event",
            metadata: [
                "kind": "\(event.kind.rawValue)", "seq": "\(event.seq)", "reason": "\(event.reason.rawValue)",
                "state": "\(event.state.rawValue)",
            ])
        guard !subscribers.isEmpty else { return }
        let frame = ReplyEncoder(allocator: ByteBufferAllocator()).reply(SubscribeReply(event: event), continues: true)
        for subscriber in subscribers.values {
            deliver(frame, to: subscriber)
        }
    }

    /// Writes `frame` now if the socket has room, else queues it; a full queue disconnects.
    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) {
        if subscriber.queue.isEmpty && subscriber.channel.isWritable {
            subscriber.context.writeAndFlush(NIOAny(frame), promise: nil)
            return
        }
        if !subscriber.queue.push(frame) {
            dropSlowSubscriber(subscriber)
        }
    }

    /// Drains a subscriber's queue once its socket has room again.
    func subscriberWritable(_ id: ConnectionID) {
        guard let subscriber = subscribers[id] else { return }
        let channel = subscriber.connection.channel
        var wrote = false
        while channel.isWritable, let frame = subscriber.queue.pop() {
            channel.write(frame, promise: nil)
            wrote = true
        }
        if wrote { channel.flush() }
    }

    private func dropSlowSubscriber(_ subscriber: Subscriber) {
        let id = subscriber.connection.id
        subscribers.removeValue(forKey: id)
        let limit = configuration.limits.maxQueuedEvents
        logger.warning(
            "subscriber too slow; disconnected",
            metadata: ["pid": "\(subscriber.connection.identity.pid)", "queued": "\(limit)"])
        let channel = subscriber.connection.channel
        let frame = ReplyEncoder(allocator: channel.allocator).error(
            CordonError.subscriberTooSlow(limit: limit).varlinkError)
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Starts streaming to `connection`: the current state first, then every change.
    func subscribe(_ connection: AgentConnection, token: String?) throws(CordonError) {
        if let token {
            try registry.bindSubscriber(token: token, subscriber: connection.id, pid: Int(connection.identity.pid))
        }
        let subscriber = Subscriber(connection: connection, capacity: configuration.limits.maxQueuedEvents)
        subscribers[connection.id] = subscriber
        let snapshot = machine.snapshot(now: clock())
        deliver(
            ReplyEncoder(allocator: connection.channel.allocator).reply(
                SubscribeReply(event: snapshot), continues: true), to: subscriber)
    }
}
