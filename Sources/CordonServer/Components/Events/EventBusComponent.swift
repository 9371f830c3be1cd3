import CordonLifecycle
import CordonProtocol
import NIOCore

/// The event bus (`io.cordon.App.Subscribe`): every subscriber first gets the current state,
/// then every event in order, each encoded once and written straight to the subscriber's socket
/// (`Subscriber.write`: one `send` while NIO holds nothing for it, else its handler context); a
/// subscriber whose socket is full queues a bounded backlog, then is dropped with
/// `SubscriberTooSlow` so the others are never held up (docs/ARCHITECTURE.md, "An event, from
/// the lifecycle machine to every subscriber").
final class EventBusComponent: AgentComponent {
    /// How long a suspend waits at most for a slow subscriber to take its `DidLock`
    /// (logind's own `InhibitDelayMaxSec` is 5 s by default).
    static let suspendFlushSeconds: Int64 = 4

    private unowned let host: any ComponentHost
    private var subscribers = SubscriberTable()
    /// How frames went out, since the agent started.
    private(set) var counters = FanoutCounters()

    init(host: any ComponentHost) {
        self.host = host
    }

    private var loop: any EventLoop { host.loop }

    /// Serves `io.cordon.App.Subscribe`.
    func serveSubscribe(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(SubscribeParameters.self)
        guard call.header.more else { throw .expectedMore }
        try typed { () throws(CordonError) in try subscribe(call.connection, token: parameters.token) }
        return .streaming
    }

    func connectionClosed(_ id: ConnectionID) {
        subscribers.removeValue(forKey: id)
    }

    /// Connection `id` is ending with a final frame written through NIO: its events follow
    /// that frame's order, so none goes past NIO any more.
    func connectionFailing(_ id: ConnectionID) {
        subscribers[id].map { $0.stopDirectWrites() }
    }

    /// The subscriber streaming on connection `id`, if any.
    func subscriber(_ id: ConnectionID) -> Subscriber? { subscribers[id] }

    /// How many connections are streaming events.
    var subscriberCount: Int { subscribers.values.count }

    /// Sends `event` to every subscriber, encoded once and shared by all of them.
    /// The subscribers of apps in `withheld` do not get it: the container's key coming back is not
    /// theirs while the device's posture keeps their own key revoked (docs/ARCHITECTURE.md,
    /// "Posture"); they hear `EncryptionKeyAvailable` with reason `posture` when it is lifted.
    func publish(_ event: CordonEvent, withholdingFrom withheld: Set<String> = []) {
        guard !subscribers.isEmpty else { return }
        let frame = ReplyEncoder(allocator: ByteBufferAllocator()).reply(SubscribeReply(event: event), continues: true)
        guard withheld.isEmpty else {
            for subscriber in subscribers.values {
                let appId = host.registry.registration(subscribedOn: subscriber.connection.id)?.appId
                if let appId, withheld.contains(appId) { continue }
                deliver(frame, to: subscriber)
            }
            return
        }
        for subscriber in subscribers.values {
            deliver(frame, to: subscriber)
        }
    }

    /// Writes `frame` now if the socket has room, else queues it; a full queue disconnects.
    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) {
        if subscriber.queue.isEmpty && subscriber.channel.isWritable {
            subscriber.write(frame, counting: &counters)
            return
        }
        if !subscriber.queue.push(frame) {
            dropSlowSubscriber(subscriber)
        }
    }

    /// Drains a subscriber's queue once its socket has room again.
    func writable(_ id: ConnectionID) {
        guard let subscriber = subscribers[id] else { return }
        var wrote = false
        while subscriber.channel.isWritable, let frame = subscriber.queue.pop() {
            subscriber.writeThroughNIO(frame, flush: false)
            wrote = true
        }
        if wrote { subscriber.context.flush() }
    }

    private func dropSlowSubscriber(_ subscriber: Subscriber) {
        let id = subscriber.connection.id
        subscribers.removeValue(forKey: id)
        let limit = host.configuration.limits.maxQueuedEvents
        host.logger.warning(
            "subscriber too slow; disconnected",
            metadata: ["pid": "\(subscriber.connection.identity.pid)", "queued": "\(limit)"])
        let channel = subscriber.connection.channel
        let frame = ReplyEncoder(allocator: channel.allocator).error(
            CordonError.subscriberTooSlow(limit: limit).varlinkError)
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Starts streaming to `connection`: the current state first, then every change.
    private func subscribe(_ connection: AgentConnection, token: String?) throws(CordonError) {
        if let token {
            try host.bindSubscriber(token: token, connection: connection)
        }
        let subscriber = Subscriber(connection: connection, capacity: host.configuration.limits.maxQueuedEvents)
        subscribers[connection.id] = subscriber
        if let socket = DirectSocket.locate(connection.channel, logger: host.logger) {
            subscriber.useDirectWrites(socket)
        }
        let snapshot = host.snapshot()
        deliver(
            ReplyEncoder(allocator: connection.channel.allocator).reply(
                SubscribeReply(event: snapshot), continues: true), to: subscriber)
        // What the posture conditions told the app before it subscribed (a warning, a revocation).
        host.subscriberBound(connection.id)
    }

    /// Completes once every event broadcast so far has been written to every subscriber's
    /// socket (a queued backlog is waited for, up to `suspendFlushSeconds`).
    func flushed() -> EventLoopFuture<Void> {
        let deadline = NIODeadline.now() + .seconds(Self.suspendFlushSeconds)
        let barriers = subscribers.values.map { subscriber -> EventLoopFuture<Void> in
            let id = subscriber.connection.id
            let promise = loop.makePromise(of: Void.self)
            waitUntilDrained(id, deadline: deadline, promise: promise)
            return promise.futureResult
        }
        return EventLoopFuture.andAllComplete(barriers, on: loop)
    }

    /// Writes an empty barrier behind a subscriber's events once its queue is empty: NIO
    /// completes writes in order, so the barrier completes after the events are written.
    private func waitUntilDrained(_ id: ConnectionID, deadline: NIODeadline, promise: EventLoopPromise<Void>) {
        guard let subscriber = subscribers[id], NIODeadline.now() < deadline else {
            promise.succeed(())
            return
        }
        guard subscriber.queue.isEmpty else {
            loop.assumeIsolated().scheduleTask(in: .milliseconds(10)) { [self] in
                waitUntilDrained(id, deadline: deadline, promise: promise)
            }
            return
        }
        let written = loop.makePromise(of: Void.self)
        subscriber.writeThroughNIO(ByteBuffer(), promise: written)
        written.futureResult.whenComplete { _ in promise.succeed(()) }
    }
}
