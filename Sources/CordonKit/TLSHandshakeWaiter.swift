import NIOCore
import NIOSSL
import NIOTLS

/// Completes `promise` with the negotiated ALPN protocol when the TLS handshake completes, or
/// fails it with the verification callback's refusal, the TLS error, or the server closing
/// first (docs/ARCHITECTURE.md, "Pinned channel").
///
/// After the handshake it holds what the server sends (an HTTP/2 server's SETTINGS come at once)
/// until the pipeline that reads it is in place: `ChannelConnector.release(_:)` removes it, and
/// it hands the held bytes on as it leaves.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Its name in the pipeline.
    static let name = "cordon-tls-handshake"

    private let promise: EventLoopPromise<String?>
    private let outcome: VerificationOutcome
    private let host: String
    private var done = false
    private var held: [NIOAny] = []

    init(promise: EventLoopPromise<String?>, outcome: VerificationOutcome, host: String) {
        self.promise = promise
        self.outcome = outcome
        self.host = host
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if done { held.append(data) } else { context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if held.isEmpty { context.fireChannelReadComplete() }
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let pending = held
        held = []
        for data in pending { context.fireChannelRead(data) }
        if !pending.isEmpty { context.fireChannelReadComplete() }
        context.leavePipeline(removalToken: removalToken)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = tls, !done {
            done = true
            promise.succeed(negotiated)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(outcome.error ?? SecureChannelError.handshakeFailed(host: host, reason: Self.describe(error)))
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(
                outcome.error
                    ?? SecureChannelError.handshakeFailed(
                        host: host, reason: "the server closed the connection during the handshake"))
        }
        context.fireChannelInactive()
    }

    static func describe(_ error: any Error) -> String {
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .handshakeFailed(let reason): return "TLS error \(reason)"
            case .uncleanShutdown: return "the server closed the connection without a TLS close"
            default: return "\(ssl)"
            }
        }
        return "\(error)"
    }
}
