import CordonLocking
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
        // The handler is kept from the initializer: the agent may refuse (and close) at once,
        // and that refusal must still reach the first call.
        let installed = Locked<NIOLoopBound<VarlinkClientHandler>?>(nil)
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = VarlinkClientHandler()
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes * 16)))
                        try channel.pipeline.syncOperations.addHandler(handler)
                        installed.withLock { $0 = NIOLoopBound(handler, eventLoop: channel.eventLoop) }
                    }
                }
                .connect(unixDomainSocketPath: path).get()
            guard let handler = installed.withLock({ $0 }) else {
                throw CordonClientError.agentUnavailable(socket: path, reason: "the connection was not set up")
            }
            return VarlinkClientConnection(channel: channel, handler: handler)
        } catch let error as CordonClientError {
            throw error
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
        try Self.decode(type, from: reply)
    }

    /// Decodes a reply's parameters, or throws the error it carries. A reply the SDK cannot read
    /// (a member missing, or a spelling a newer agent added) is `protocolViolation`, naming it.
    static func decode<R: Decodable>(_ type: R.Type, from reply: Data) throws -> R {
        // Parsed once: the error member is read from the tree, the parameters decoded from it.
        guard let node = try? JSONNodeParser.parse(reply), case .object = node else {
            throw CordonClientError.protocolViolation("a reply that is not a JSON object")
        }
        if case .string(let name)? = node["error"] {
            let parameters = node["parameters"].flatMap {
                try? VarlinkJSONDecoder().decode([String: JSONValue].self, from: $0)
            }
            let error = VarlinkError(name: name, parameters: parameters ?? [:])
            if let typed = CordonError(error) { throw typed }
            throw CordonClientError.remote(error)
        }
        do {
            return try VarlinkCodec().decodeParameters(R.self, fromMember: node["parameters"])
        } catch {
            let detail = error.parameters.values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }.sorted().joined(separator: ", ")
            throw CordonClientError.protocolViolation(
                "unexpected reply: \(error.name)" + (detail.isEmpty ? "" : " (\(detail))"))
        }
    }

    private func send<P: Encodable & Sendable>(_ call: VarlinkCall<P>) async throws -> Data {
        let frame = try codec.encode(call)
        let handler = self.handler
        let channel = self.channel
        return try await withCheckedThrowingContinuation { continuation in
            channel.eventLoop.execute {
                // A closed connection answers from the handler: its refusal, or connectionClosed.
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
    /// A message that arrived before any call: the agent refusing the connection.
    private var refusal: Data?

    func enqueue(_ call: Pending) {
        if let refusal {
            // The caller decodes the refusal into its typed error.
            switch call {
            case .single(let continuation): continuation.resume(returning: refusal)
            case .stream(let continuation):
                continuation.yield(refusal)
                continuation.finish()
            }
            return
        }
        guard !closed else {
            fail(call, CordonClientError.connectionClosed)
            return
        }
        pending.append(call)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = Data(unwrapInboundIn(data).readableBytesView)
        guard head < pending.count else {
            // Before any call, this can only be a refusal; later, an unsolicited reply is ignored.
            if refusal == nil { refusal = message }
            return
        }
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
        return (try? VarlinkJSONDecoder().decode(Flag.self, from: message))?.continues ?? false
    }
}
