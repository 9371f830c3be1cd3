import CordonProtocol
import CordonSystem
import CordonTransport
import Foundation
import NIOCore

/// Serves one connection: identifies the peer, then answers its calls in order.
///
/// Backpressure keeps a client's footprint bounded: while a call is in flight, or the
/// socket's send buffer is full, further messages wait in a bounded backlog, and once that
/// is full the handler stops reading from the socket.
///
/// Like the agent it serves, it lives on the one event loop and is not `Sendable`: callbacks
/// continue on the loop through `assumeIsolated()`.
final class AgentConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let agent: Agent
    private var connection: AgentConnection?
    private var backlog: BoundedQueue<ByteBuffer>
    private var busy = false
    private var streaming = false
    private var readHeld = false
    private var closing = false
    private var needsFlush = false

    init(agent: Agent) {
        self.agent = agent
        backlog = BoundedQueue(capacity: agent.configuration.limits.maxPendingCalls)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        let channel = context.channel
        guard let provider = channel as? any SocketOptionProvider else {
            refuse(context: context, with: .permissionDenied)
            return
        }
        // On the channel's own loop these futures are already complete.
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        let pidfd: EventLoopFuture<CInt> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(77))  // SO_PEERPIDFD
        credentials.and(pidfd.recover { _ in -1 }).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (credentials, pidfdNumber)):
                let (identity, handle) = PeerIdentity.resolve(
                    pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, pidfd: pidfdNumber)
                switch agent.connectionOpened(context: context, identity: identity, pidfd: handle) {
                case .success(let connection):
                    self.connection = connection
                    processBacklog(context: context)
                case .failure(let error):
                    refuse(context: context, with: error)
                }
            case .failure:
                refuse(context: context, with: .permissionDenied)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection { agent.connectionClosed(connection.id) }
        connection = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let frame = unwrapInboundIn(data)
        if !backlog.push(frame) {
            // Only reachable if one read delivered more messages than the backlog holds.
            fail(context: context, with: .invalidMessage(reason: "too many pipelined calls"))
            return
        }
        processBacklog(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if let connection { agent.eventBus.writable(connection.id) }
            processBacklog(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        // A streaming or closing connection keeps reading so the client's close is seen at once.
        if backlog.count >= backlog.capacity / 2 && !streaming && !closing {
            readHeld = true
            return
        }
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case VarlinkFrameError.messageTooLarge(let limit) = error {
            fail(context: context, with: .messageTooLarge(limit: limit))
        } else {
            context.close(promise: nil)
        }
    }

    // MARK: - Calls

    private func processBacklog(context: ChannelHandlerContext) {
        while connection != nil, !busy, !streaming, !closing, context.channel.isWritable, let frame = backlog.pop() {
            handle(frame, context: context)
        }
        flushIfNeeded(context: context)
        if readHeld && backlog.count < backlog.capacity / 2 {
            readHeld = false
            context.read()
        }
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
        let header = message.header
        switch agent.dispatch(message, connection: connection) {
        case .reply(let reply):
            send(reply, oneway: header.oneway, context: context)
        case .deferred(let future):
            busy = true
            future.assumeIsolated().whenComplete { [self] result in
                busy = false
                switch result {
                case .success(let reply): send(reply, oneway: header.oneway, context: context)
                case .failure: context.close(promise: nil)
                }
                processBacklog(context: context)
            }
        case .streaming:
            streaming = true
        case .close(let reply):
            fail(context: context, frame: reply)
        }
    }

    private func send(_ reply: ByteBuffer, oneway: Bool, context: ChannelHandlerContext) {
        guard !oneway, !closing, context.channel.isActive else { return }
        context.write(wrapOutboundOut(reply), promise: nil)
        needsFlush = true
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    private func refuse(context: ChannelHandlerContext, with error: VarlinkError) {
        fail(context: context, with: error)
    }

    private func fail(context: ChannelHandlerContext, with error: VarlinkError) {
        fail(context: context, frame: ReplyEncoder(allocator: context.channel.allocator).error(error))
    }

    /// Sends a final error and ends the connection without losing that error to a reset: the
    /// agent half-closes, discards whatever the client still sends, and closes fully once the
    /// client does, or after a second.
    private func fail(context: ChannelHandlerContext, frame: ByteBuffer) {
        guard !closing else { return }
        closing = true
        backlog = BoundedQueue(capacity: backlog.capacity)
        flushIfNeeded(context: context)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        context.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        if readHeld {
            readHeld = false
            context.read()
        }
    }
}
