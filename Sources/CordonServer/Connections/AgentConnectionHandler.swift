import CordonProtocol
import CordonSystem
import CordonTransport
import Foundation
import NIOCore

/// Serves one connection: identifies the peer, cuts what it reads into varlink messages at each
/// NUL (`VarlinkFrameSplitter`), and answers the calls in order.
///
/// It frames its own reads rather than behind NIO's `ByteToMessageHandler`: one pipeline step
/// less on every call, the largest part of the agent's fixed cost per call that was framing
/// (docs/PERFORMANCE.md, "Round trips").
///
/// Every read is checked against the process that connected: the kernel names the writer of each
/// read (``MessageSenders``), and bytes another process wrote — through a copy of the socket it
/// inherited, was handed or took — are never served: the connection gets
/// `io.cordon.Agent.ForeignSender` and closes (docs/ARCHITECTURE.md, "Who wrote a message").
///
/// A reply goes out with one `send` on the connection's socket (``MessageSenders/socket``) while
/// NIO holds nothing of this connection's, and through NIO otherwise (what a `send` left, a full
/// socket, a connection that streams or fails): NIO completes a channel's writes in order, so
/// once every write handed to it has completed a direct `send` cannot overtake an earlier reply
/// or land inside one (docs/ARCHITECTURE.md, "The path of a call").
///
/// What to do next is `ConnectionStateMachine`'s to decide (back-pressure, pipelining,
/// streaming, closing, idleness); this performs it on the channel, with the loop's clock (an
/// `EmbeddedEventLoop`'s in tests). Like the agent it serves, it lives on the one event loop
/// and is not `Sendable`: callbacks continue on the loop through `assumeIsolated()`.
final class AgentConnectionHandler<Host: ConnectionAgent>: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let agent: Host
    private let identify: PeerIdentification
    private let attachSenders: SenderAttachment
    /// Who wrote each read; nil before the channel is active or when it could not be attached.
    private var senders: (any MessageSenders)?
    /// The process that connected, once identified.
    private var peer: Int32?
    /// The writers of reads that came before the peer was identified.
    private var earlyWriters: [Int32?] = []
    private var connection: AgentConnection?
    private var state: ConnectionStateMachine<ByteBuffer>
    /// Fires when the connection may have been idle for the timeout.
    private var idleTimer: Scheduled<Void>?
    /// Where the next message ends in what was read.
    private var splitter: VarlinkFrameSplitter
    /// Bytes read and not yet cut into messages: a message whose NUL has not arrived, or (while
    /// ``splitting``) a read delivered during another's.
    private var unread: ByteBuffer?
    /// A read is being cut into messages.
    private var splitting = false
    /// A message was over the limit: everything read after it is discarded.
    private var discarding = false
    /// The connection's socket for replies written past NIO; nil keeps every write on NIO's
    /// path (no socket found, or the connection streams or fails).
    private var replySocket: DirectSocket?
    /// Writes on NIO's path (the handler's own and those passing through it) not yet completed,
    /// counted while ``replySocket`` is known.
    private var writesInNIO = 0

    init(
        agent: Host, identify: @escaping PeerIdentification = PeerCredentialReader.identify,
        senders: @escaping SenderAttachment = KernelSenders.attach
    ) {
        self.agent = agent
        self.identify = identify
        attachSenders = senders
        state = ConnectionStateMachine(
            maxPendingCalls: agent.limits.maxPendingCalls, maxPendingBytes: agent.limits.maxPendingBytes)
        splitter = VarlinkFrameSplitter(maxMessageBytes: agent.limits.maxMessageBytes)
    }

    func channelActive(context: ChannelHandlerContext) {
        // Before NIO's first read, so that no read holds two writers' bytes.
        senders = attachSenders(context)
        replySocket = senders?.socket
        context.fireChannelActive()
        identify(context).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (identity, handle)):
                guard senders != nil else {
                    fail(
                        context: context,
                        with: CordonError.internalError(reason: "the agent cannot tell who writes on this connection")
                            .varlinkError)
                    return
                }
                peer = identity.pid
                if let foreign = earlyWriters.first(where: { $0 != identity.pid }) {
                    earlyWriters = []
                    refuse(writer: foreign, context: context)
                    return
                }
                earlyWriters = []
                switch agent.connectionOpened(context: context, identity: identity, pidfd: handle) {
                case .success(let connection):
                    self.connection = connection
                    state.admitted(now: Self.now(context))
                    // A zero timeout turns the idle check off.
                    if idleTimeout > 0 { scheduleIdleCheck(in: idleTimeout, context: context) }
                    processBacklog(context: context)
                case .failure(let error):
                    fail(context: context, with: error)
                }
            case .failure:
                fail(context: context, with: .permissionDenied)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        senders?.stop()
        idleTimer?.cancel()
        idleTimer = nil
        unread = nil  // A trailing message without its NUL is incomplete: dropped.
        if let connection { agent.connectionClosed(connection.id) }
        connection = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !discarding else { return }
        // Read right away: the next read replaces it.
        let writer = senders?.lastWriter()
        if let peer {
            guard writer == peer else { return refuse(writer: writer, context: context) }
        } else {
            earlyWriters.append(writer)
        }
        var bytes = unwrapInboundIn(data)
        if var held = unread {
            unread = nil
            held.writeBuffer(&bytes)
            bytes = held
        }
        // Reached again from a call handled below: its bytes follow the ones being cut.
        guard !splitting else {
            unread = bytes
            return
        }
        splitting = true
        defer { splitting = false }
        while true {
            if var later = unread {
                unread = nil
                bytes.writeBuffer(&later)
            }
            switch splitter.scan(bytes.readableBytesView) {
            case .message(let length):
                // Both reads are within the readable bytes just scanned.
                guard let frame = bytes.readSlice(length: length) else { return }
                bytes.moveReaderIndex(forwardBy: 1)
                received(frame, context: context)
                if discarding { return }
            case .needMoreData:
                guard bytes.readableBytes > 0 else { return }
                // A part of a message holds on to its own bytes, not a whole read buffer.
                let compact = bytes.storageCapacity > 2 * bytes.readableBytes
                unread = compact ? context.channel.allocator.buffer(buffer: bytes) : bytes
                return
            case .tooLarge:
                discarding = true
                fail(context: context, with: .messageTooLarge(limit: splitter.maxMessageBytes))
                return
            }
        }
    }

    /// One message read: served now or queued, as the state machine says.
    private func received(_ message: ByteBuffer, context: ChannelHandlerContext) {
        var frame = message
        // A call that waits holds only its own bytes, not the read buffer it was cut from.
        if !state.servesAtOnce(isWritable: context.channel.isWritable) && frame.storageCapacity > frame.readableBytes {
            frame = context.channel.allocator.buffer(buffer: frame)
        }
        switch state.received(frame, bytes: frame.readableBytes, now: Self.now(context)) {
        case .process: processBacklog(context: context)
        case .drop: break
        // Only reachable if one read delivered more messages than the backlog holds.
        case .failTooManyPipelined: fail(context: context, with: .invalidMessage(reason: "too many pipelined calls"))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if let connection { agent.connectionWritable(connection.id) }
            processBacklog(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// A write from further along the pipeline (the agent's shutdown, the event bus) is counted
    /// like the handler's own, so no reply overtakes it.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: counted(promise, context: context))
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Bytes on this connection were written by `writer` (nil: the kernel named no process the
    /// agent can see), not by the process that connected: nothing it wrote is served, the calls
    /// before it are answered, and the connection ends with `ForeignSender`.
    private func refuse(writer: Int32?, context: ChannelHandlerContext) {
        discarding = true
        unread = nil
        let pid = peer ?? 0
        if let connection { agent.foreignSender(writer ?? 0, on: connection.id) }
        fail(context: context, with: CordonError.foreignSender(pid: Int(pid), sender: Int(writer ?? 0)).varlinkError)
    }

    // MARK: - Calls

    private func processBacklog(context: ChannelHandlerContext) {
        while let frame = state.nextCall(isWritable: context.channel.isWritable) {
            handle(frame, context: context)
        }
        flushIfNeeded(context: context)
        if state.shouldResumeReading() { context.read() }
    }

    private func handle(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        guard let connection else { return }
        let message: VarlinkCallMessage
        do {
            message = try VarlinkCodec().decodeCall(frame.readableBytesView)
        } catch {
            fail(context: context, with: error)
            return
        }
        let oneway = message.header.oneway
        let started = Self.now(context)
        let interface = message.header.interface
        let outcome = agent.dispatch(message, connection: connection)
        if case .deferred = outcome {} else { timed(interface, since: started, context: context) }
        switch outcome {
        case .reply(let reply):
            let buffered = !oneway && context.channel.isActive && write(reply, context: context)
            state.started(.reply(flush: buffered))
        case .deferred(let future):
            state.started(.deferred)
            future.assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success(let reply):
                    if state.deferredCompleted(oneway: oneway, now: Self.now(context)), context.channel.isActive {
                        _ = write(reply, context: context)
                    }
                    timed(interface, since: started, context: context)
                case .failure:
                    _ = state.deferredCompleted(oneway: true, now: Self.now(context))
                    context.close(promise: nil)
                }
                processBacklog(context: context)
            }
        case .streaming:
            // The event bus writes to the socket from now on (`Subscriber`), ordering its frames
            // behind whatever NIO holds; a reply of the handler's could not know of them.
            replySocket = nil
            state.started(.streaming)
        case .close(let reply):
            state.started(.close)
            fail(context: context, frame: reply)
        }
    }

    /// Writes `reply` on the active channel: with one `send` when NIO holds nothing of this
    /// connection's, else (and for whatever a `send` left) through NIO. Whether NIO now holds it,
    /// to be flushed.
    private func write(_ reply: ByteBuffer, context: ChannelHandlerContext) -> Bool {
        guard let socket = replySocket, writesInNIO == 0 else {
            context.write(wrapOutboundOut(reply), promise: counted(nil, context: context))
            return true
        }
        var rest = reply
        switch socket.send(reply) {
        case .wrote:
            return false
        case .partial(let count):
            rest.moveReaderIndex(forwardBy: count)
        case .wouldBlock, .failed:
            // NIO waits for room, or meets the same error and closes the channel as it would have.
            break
        }
        context.write(wrapOutboundOut(rest), promise: counted(nil, context: context))
        return true
    }

    /// `promise`, or one made for the purpose, counted in ``writesInNIO`` until NIO completes the
    /// write (written, or failed as the channel closes); `promise` itself when no socket is known.
    private func counted(_ promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) -> EventLoopPromise<Void>?
    {
        guard replySocket != nil else { return promise }
        let counted = promise ?? context.eventLoop.makePromise(of: Void.self)
        writesInNIO += 1
        counted.futureResult.assumeIsolated().whenComplete { [self] _ in writesInNIO -= 1 }
        return counted
    }

    /// A call on `interface` read at `started` has its reply written (queued on the channel).
    private func timed(_ interface: String, since started: UInt64, context: ChannelHandlerContext) {
        let now = Self.now(context)
        agent.callMetrics?.call(interface, nanoseconds: now >= started ? now - started : 0)
    }

    // MARK: - Idleness

    private var idleTimeout: UInt64 {
        let (seconds, attoseconds) = agent.limits.idleConnectionTimeout.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }

    private static func now(_ context: ChannelHandlerContext) -> UInt64 {
        context.eventLoop.now.uptimeNanoseconds
    }

    private func scheduleIdleCheck(in nanoseconds: UInt64, context: ChannelHandlerContext) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(nanoseconds))) {
            [self] in
            checkIdle(context: context)
        }
    }

    /// A connection that never registers an app cannot hold its place forever doing nothing.
    private func checkIdle(context: ChannelHandlerContext) {
        idleTimer = nil
        guard let connection else { return }
        let timeout = idleTimeout
        let verdict = state.idleCheck(
            now: Self.now(context), timeout: timeout, registered: agent.isRegistered(connection.id))
        switch verdict {
        case .close:
            fail(context: context, with: CordonError.connectionIdle(seconds: Double(timeout) / 1e9).varlinkError)
        case .checkAfter(let nanoseconds):
            scheduleIdleCheck(in: nanoseconds, context: context)
        case .stop:
            break
        }
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        if state.takeFlush() { context.flush() }
    }

    private func fail(context: ChannelHandlerContext, with error: VarlinkError) {
        fail(context: context, frame: ReplyEncoder(allocator: context.channel.allocator).error(error))
    }

    /// Sends a final error and ends the connection without losing that error to a reset: the
    /// agent half-closes, discards whatever the client still sends, and closes fully once the
    /// client does, or after a second.
    private func fail(context: ChannelHandlerContext, frame: ByteBuffer) {
        let (first, resumeReading) = state.failing()
        guard first else { return }
        // The final error goes through NIO, and nothing may overtake it.
        replySocket = nil
        if let connection { agent.connectionFailing(connection.id) }
        flushIfNeeded(context: context)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        context.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        if resumeReading { context.read() }
    }
}
