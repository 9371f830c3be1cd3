import NIOCore
import NIOSSL
import NIOTLS

/// Completes `promise` with the negotiated ALPN protocol when the TLS handshake completes, or
/// fails it with the verification callback's refusal, the TLS error, or the server closing
/// first (docs/ARCHITECTURE.md, "Pinned channel").
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let promise: EventLoopPromise<String?>
    private let outcome: VerificationOutcome
    private let host: String
    private var done = false

    init(promise: EventLoopPromise<String?>, outcome: VerificationOutcome, host: String) {
        self.promise = promise
        self.outcome = outcome
        self.host = host
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
