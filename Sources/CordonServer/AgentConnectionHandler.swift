import CordonProtocol
import CordonSystem
import CordonTransport
import Foundation
import NIOCore

/// Serves one connection: identifies the peer, then answers its calls in order.
///
/// What to do next is `ConnectionStateMachine`'s to decide (back-pressure, pipelining,
/// streaming, closing); this performs it on the channel. Like the agent it serves, it lives on
/// the one event loop and is not `Sendable`: callbacks continue on the loop through
/// `assumeIsolated()`.
final class AgentConnectionHandler<Host: ConnectionAgent>: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let agent: Host
    private let identify: PeerIdentification
    private var connection: AgentConnection?
    private var state: ConnectionStateMachine<ByteBuffer>

    init(agent: Host, identify: @escaping PeerIdentification = PeerCredentialReader.identify) {
        self.agent = agent
        self.identify = identify
        state = ConnectionStateMachine(maxPendingCalls: agent.limits.maxPendingCalls)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        identify(context).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (identity, handle)):
                switch agent.connectionOpened(context: context, identity: identity, pidfd: handle) {
                case .success(let connection):
                    self.connection = connection
                    state.admitted()
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
        if let connection { agent.connectionClosed(connection.id) }
        connection = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state.received(unwrapInboundIn(data)) {
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

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
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
        switch agent.dispatch(message, connection: connection) {
        case .reply(let reply):
            let send = !oneway && context.channel.isActive
            state.started(.reply(send: send))
            if send { context.write(wrapOutboundOut(reply), promise: nil) }
        case .deferred(let future):
            state.started(.deferred)
            future.assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success(let reply):
                    if state.deferredCompleted(oneway: oneway), context.channel.isActive {
                        context.write(wrapOutboundOut(reply), promise: nil)
                    }
                case .failure:
                    _ = state.deferredCompleted(oneway: true)
                    context.close(promise: nil)
                }
                processBacklog(context: context)
            }
        case .streaming:
            state.started(.streaming)
        case .close(let reply):
            state.started(.close)
            fail(context: context, frame: reply)
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
        flushIfNeeded(context: context)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        context.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        if resumeReading { context.read() }
    }
}
