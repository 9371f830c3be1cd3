import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// One request and where its response goes (docs/ARCHITECTURE.md, "Pinned channel").
struct HTTPExchange: Sendable {
    let host: String
    let head: HTTPRequestHead
    let body: [UInt8]
    let limit: Int
    let promise: EventLoopPromise<SecureChannel.Response>
}

/// Sends one request once the channel is active and collects its response, bounded by the
/// exchange's limit; a parse error, an HTTP/2 error or the server closing early fails the
/// exchange with a typed reason.
final class HTTPResponseCollector: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: HTTPExchange
    private let http2: Bool
    private var sent = false
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    private var finished = false

    init(_ exchange: HTTPExchange, http2: Bool = false) {
        self.exchange = exchange
        self.http2 = http2
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { send(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        send(context)
        context.fireChannelActive()
    }

    private func send(_ context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if !exchange.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: exchange.body)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            // 1xx answers precede the real one.
            if received.status.code >= 200 || received.status.code < 100 { head = received }
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= exchange.limit else {
                fail(context, .responseTooLarge(host: exchange.host, limit: exchange.limit))
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            finished = true
            let version = http2 ? "HTTP/2" : "HTTP/\(head.version.major).\(head.version.minor)"
            exchange.promise.succeed(
                SecureChannel.Response(
                    status: Int(head.status.code), headers: head.headers.map { (name: $0.name, value: $0.value) },
                    body: body,
                    httpVersion: version))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, Self.classify(error, host: exchange.host))
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(context, .closedMidStream(host: exchange.host))
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ error: SecureChannelError) {
        guard !finished else { return }
        finished = true
        exchange.promise.fail(error)
        context.close(promise: nil)
    }

    static func classify(_ error: any Error, host: String) -> SecureChannelError {
        if let parse = error as? HTTPParserError {
            if case .invalidEOFState = parse { return .closedMidStream(host: host) }
            return .malformedResponse(host: host, reason: "\(parse)")
        }
        if let ssl = error as? NIOSSLError, case .uncleanShutdown = ssl { return .closedMidStream(host: host) }
        if error is NIOHTTP2Errors.StreamClosed { return .closedMidStream(host: host) }
        if let channelError = error as? ChannelError, channelError == .eof || channelError == .inputClosed {
            return .closedMidStream(host: host)
        }
        return .malformedResponse(host: host, reason: "\(error)")
    }
}
