import NIOCore

/// A connection streaming events, with a bounded queue for when its socket is full.
///
/// A frame goes straight to the socket's descriptor (`DirectSocket`) when nothing is waiting
/// for that subscriber: neither in `queue` nor in NIO. Every write handed to NIO while a
/// descriptor is known is counted until NIO completes it (written, or failed on close), and NIO
/// completes a channel's writes in order, so a zero count means NIO holds nothing of ours and a
/// direct write cannot overtake an earlier frame or land inside one (docs/ARCHITECTURE.md, "An
/// event, from the lifecycle machine to every subscriber"). Lives on the event loop.
final class Subscriber {
    let connection: AgentConnection
    /// The connection's channel and handler context, held here so the broadcast loop reaches
    /// them in one step.
    let channel: any Channel
    let context: ChannelHandlerContext
    var queue: BoundedQueue<ByteBuffer>
    /// Its place in `SubscriberTable.values`.
    var index = 0
    /// The socket's confirmed descriptor; nil keeps every frame on NIO's path.
    private(set) var socket: DirectSocket?
    /// Writes handed to NIO while `socket` was known, not yet completed.
    private(set) var writesInNIO = 0

    init(connection: AgentConnection, capacity: Int) {
        self.connection = connection
        channel = connection.channel
        context = connection.context
        queue = BoundedQueue(capacity: capacity)
    }

    /// Starts writing frames to `socket` directly. Whatever NIO already holds for the
    /// connection (replies to calls before `Subscribe`) is ordered first: an empty write, counted,
    /// completes only after them, and until it does every frame goes through NIO.
    func useDirectWrites(_ socket: DirectSocket) {
        self.socket = socket
        writeThroughNIO(ByteBuffer())
    }

    /// From now on every frame goes through NIO: the connection is ending with a final frame
    /// written there, which nothing may overtake.
    func stopDirectWrites() {
        socket = nil
    }

    /// Writes `frame` now: with one `send` on the descriptor when NIO holds nothing for this
    /// subscriber, else (and for whatever a `send` left) through NIO. The caller has checked
    /// that the queue is empty and the channel writable.
    func write(_ frame: ByteBuffer, counting counters: inout FanoutCounters) {
        guard let socket, writesInNIO == 0, channel.isActive else {
            counters.throughNIO += 1
            writeThroughNIO(frame)
            return
        }
        let outcome = socket.send(frame)
        counters.record(outcome)
        switch outcome {
        case .wrote:
            return
        case .partial(let count):
            var rest = frame
            rest.moveReaderIndex(forwardBy: count)
            writeThroughNIO(rest)
        case .wouldBlock, .failed:
            // NIO waits for room, or meets the same error and closes the channel as it would have.
            writeThroughNIO(frame)
        }
    }

    /// Hands `frame` to NIO (flushed unless `flush` is false), counted in `writesInNIO` until NIO
    /// completes it while a descriptor is known; `promise` completes with the write.
    func writeThroughNIO(_ frame: ByteBuffer, flush: Bool = true, promise: EventLoopPromise<Void>? = nil) {
        var promise = promise
        if socket != nil {
            let counted = promise ?? context.eventLoop.makePromise(of: Void.self)
            writesInNIO += 1
            counted.futureResult.assumeIsolated().whenComplete { [self] _ in writesInNIO -= 1 }
            promise = counted
        }
        if flush {
            context.writeAndFlush(NIOAny(frame), promise: promise)
        } else {
            context.write(NIOAny(frame), promise: promise)
        }
    }
}
