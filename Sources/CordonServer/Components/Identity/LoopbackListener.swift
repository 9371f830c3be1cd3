import NIOCore
import NIOPosix

/// The one-shot listener of a loopback sign-in (RFC 8252 §7.3, docs/ARCHITECTURE.md "Identity"):
/// bound to 127.0.0.1 on an ephemeral port, it reads one request line per connection (at most
/// 8 KiB of head), hands the target of the first `GET /callback…` to the flight, answers the
/// browser with a short page and stops listening. Other paths get 404 and it keeps listening.
/// Its handler runs on the agent's event loop.
final class LoopbackListener: Sendable {
    private let server: any Channel
    /// The port the kernel chose.
    let port: Int

    private init(server: any Channel, port: Int) {
        self.server = server
        self.port = port
    }

    /// Listens on `loop`; `received` gets the target of the redirect, once.
    static func open(on loop: any EventLoop, received: @escaping (String) -> Void) -> EventLoopFuture<LoopbackListener>
    {
        let delivered = NIOLoopBound(OneShot(received), eventLoop: loop)
        return ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(LoopbackRequestHandler(delivered: delivered))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .flatMapThrowing { channel in
                guard let port = channel.localAddress?.port else {
                    channel.close(promise: nil)
                    throw ChannelError.unknownLocalAddress
                }
                let listener = LoopbackListener(server: channel, port: port)
                delivered.value.onDelivery = { channel.close(promise: nil) }
                return listener
            }
    }

    /// Stops listening (the flight ended).
    func close() { server.close(promise: nil) }
}

/// The redirect's target, delivered at most once.
private final class OneShot {
    private var received: ((String) -> Void)?
    var onDelivery: (() -> Void)?

    init(_ received: @escaping (String) -> Void) {
        self.received = received
    }

    func deliver(_ target: String) {
        guard let received else { return }
        self.received = nil
        onDelivery?()
        received(target)
    }
}

/// Reads one HTTP request head and answers it.
private final class LoopbackRequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let maximumHead = 8 * 1024

    private let delivered: NIOLoopBound<OneShot>
    private var head: [UInt8] = []
    private var answered = false

    init(delivered: NIOLoopBound<OneShot>) {
        self.delivered = delivered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        let buffer = unwrapInboundIn(data)
        head += buffer.readableBytesView
        guard let end = Self.endOfHead(head) else {
            if head.count > Self.maximumHead {
                answer(context, status: "431 Request Header Fields Too Large", page: "")
            }
            return
        }
        let line = head[..<end].split(separator: UInt8(ascii: "\r"), maxSplits: 1).first ?? []
        let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/callback") else {
            answer(context, status: "404 Not Found", page: "Not found.")
            return
        }
        answer(
            context, status: "200 OK",
            page: "Cordon received the sign-in. You can close this window and return to your app.")
        delivered.value.deliver(String(parts[1]))
    }

    private func answer(_ context: ChannelHandlerContext, status: String, page: String) {
        answered = true
        let text =
            "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(page)"
        let channel = context.channel
        let buffer = channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
