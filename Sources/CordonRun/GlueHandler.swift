import NIOCore

/// Relays bytes between two channels on the same event loop, with backpressure (NIO's
/// connect-proxy `GlueHandler` pattern; docs/ARCHITECTURE.md, "Pinned channel"). TCP half-close
/// passes through: when one side stops sending (its input closed, with
/// `ChannelOptions.allowRemoteHalfClosure` on both channels), the other side's output is shut down
/// once what was read is written (a TLS `close_notify` upstream, `shutdown(SHUT_WR)` locally),
/// and the reply still flows back. When either side closes entirely, so does the other.
final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    private init() {}

    /// Two handlers glued to each other: add one to each channel.
    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.write(data) }

    func channelReadComplete(context: ChannelHandlerContext) { partner?.flush() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event { partner?.closeOutput() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.closeChannel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.closeChannel()
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    func read(context: ChannelHandlerContext) {
        if let partner, partner.isWritable {
            context.read()
        } else {
            pendingRead = true
        }
    }

    private var isWritable: Bool { context?.channel.isWritable ?? false }

    private func write(_ data: NIOAny) { context?.write(data, promise: nil) }

    private func flush() { context?.flush() }

    private func closeChannel() { context?.close(promise: nil) }

    /// The partner stopped sending: so does this side, after what is queued (or it closes, when
    /// its channel cannot half-close).
    private func closeOutput() {
        guard let context else { return }
        context.flush()
        let promise = context.eventLoop.makePromise(of: Void.self)
        let channel = context.channel
        promise.futureResult.whenFailure { _ in channel.close(promise: nil) }
        context.close(mode: .output, promise: promise)
    }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }
}
