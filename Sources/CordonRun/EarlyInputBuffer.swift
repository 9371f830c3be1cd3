import NIOCore

/// Holds what a tunnel's local connection delivers before the relay is in place
/// (docs/ARCHITECTURE.md, "Pinned channel"): a client that writes and shuts down its write side
/// at once has its bytes and its end of input (`ChannelEvent.inputClosed`) read before the
/// upstream's handshake completes. Removing it hands both on to the `GlueHandler` after it.
final class EarlyInputBuffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// Its name in the pipeline.
    static let name = "cordon-early-input"

    private var held: [NIOAny] = []
    private var inputClosed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { held.append(data) }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            inputClosed = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let pending = held
        held = []
        for data in pending { context.fireChannelRead(data) }
        if !pending.isEmpty { context.fireChannelReadComplete() }
        if inputClosed { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        context.leavePipeline(removalToken: removalToken)
    }
}
