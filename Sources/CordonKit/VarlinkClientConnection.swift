import CordonProtocol
import CordonTransport
import Foundation
import NIOCore
import NIOPosix

/// One varlink connection from a client: calls answered in order, and streamed calls.
final class VarlinkClientConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<VarlinkClientHandler>
    private let codec = VarlinkCodec()

    private init(channel: any Channel, handler: NIOLoopBound<VarlinkClientHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Connects to the agent's socket.
    static func connect(path: String, maxMessageBytes: Int = ConnectionLimits.standard.maxMessageBytes)
        async throws(CordonClientError) -> VarlinkClientConnection
    {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes * 16)))
                        try channel.pipeline.syncOperations.addHandler(VarlinkClientHandler())
                    }
                }
                .connect(unixDomainSocketPath: path).get()
            let handler = try await channel.eventLoop.submit {
                NIOLoopBound(
                    try channel.pipeline.syncOperations.handler(type: VarlinkClientHandler.self),
                    eventLoop: channel.eventLoop)
            }.get()
            return VarlinkClientConnection(channel: channel, handler: handler)
        } catch let error as IOError {
            throw .agentUnavailable(socket: path, reason: String(cString: strerror(error.errnoCode)))
        } catch {
            throw .agentUnavailable(socket: path, reason: String(describing: error))
        }
    }

    /// Calls `method` and decodes its single reply.
    func call<P: Encodable & Sendable, R: Decodable>(_ method: Method, _ parameters: P, returning: R.Type)
        async throws -> R
    {
        let reply = try await send(VarlinkCall(method: method.rawValue, parameters: parameters))
        return try decode(R.self, from: reply)
    }

    /// Calls `method` with `more` and yields each reply's raw message until the stream ends.
    func stream<P: Encodable & Sendable>(_ method: Method, _ parameters: P) throws -> AsyncThrowingStream<
        Data, any Error
    > {
        let frame = try codec.encode(VarlinkCall(method: method.rawValue, parameters: parameters, more: true))
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute {
            handler.value.enqueue(.stream(continuation))
            channel.writeAndFlush(channel.allocator.varlinkFrame(frame), promise: nil)
        }
        return stream
    }

    /// Decodes a reply's parameters, or throws the error it carries.
    func decode<R: Decodable>(_ type: R.Type, from reply: Data) throws -> R {
        if let failure = try? JSONDecoder().decode(ErrorEnvelope.self, from: reply), let name = failure.error {
            let error = VarlinkError(name: name, parameters: failure.parameters ?? [:])
            if let typed = CordonError(error) { throw typed }
            throw CordonClientError.remote(error)
        }
        do {
            return try codec.decodeParameters(R.self, from: reply)
        } catch {
            throw CordonClientError.protocolViolation("unexpected reply: \(error.name)")
        }
    }

    private func send<P: Encodable & Sendable>(_ call: VarlinkCall<P>) async throws -> Data {
        let frame = try codec.encode(call)
        let handler = self.handler
        let channel = self.channel
        return try await withCheckedThrowingContinuation { continuation in
            channel.eventLoop.execute {
                guard channel.isActive else {
                    continuation.resume(throwing: CordonClientError.connectionClosed)
                    return
                }
                handler.value.enqueue(.single(continuation))
                channel.writeAndFlush(channel.allocator.varlinkFrame(frame), promise: nil)
            }
        }
    }

    /// Closes the connection.
    func close() async {
        try? await channel.close()
    }

    /// A future that completes when the connection closes.
    var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

private struct ErrorEnvelope: Decodable {
    var error: String?
    var parameters: [String: JSONValue]?
}

/// Matches replies to calls in order; streamed calls take replies until one has no `continues`.
final class VarlinkClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    enum Pending {
        case single(CheckedContinuation<Data, any Error>)
        case stream(AsyncThrowingStream<Data, any Error>.Continuation)
    }

    private var pending: [Pending] = []
    private var head = 0
    private var closed = false

    func enqueue(_ call: Pending) {
        guard !closed else {
            fail(call, CordonClientError.connectionClosed)
            return
        }
        pending.append(call)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = Data(unwrapInboundIn(data).readableBytesView)
        guard head < pending.count else { return }  // An unsolicited reply: ignore it.
        switch pending[head] {
        case .single(let continuation):
            advance()
            continuation.resume(returning: message)
        case .stream(let continuation):
            continuation.yield(message)
            if !Self.continues(message) {
                advance()
                continuation.finish()
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        let remaining = pending[head...]
        pending = []
        head = 0
        for call in remaining { fail(call, CordonClientError.connectionClosed) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func advance() {
        head += 1
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        }
    }

    private func fail(_ call: Pending, _ error: any Error) {
        switch call {
        case .single(let continuation): continuation.resume(throwing: error)
        case .stream(let continuation): continuation.finish(throwing: error)
        }
    }

    private static func continues(_ message: Data) -> Bool {
        struct Flag: Decodable { var continues: Bool? }
        return (try? JSONDecoder().decode(Flag.self, from: message))?.continues ?? false
    }
}
