import CordonLifecycle
import CordonProtocol
import CordonSystem
import CordonTransport
import NIOCore
import NIOEmbedded
import Testing

@testable import CordonServer

/// `AgentConnectionHandler` on an `EmbeddedChannel` with a scripted agent: framing, ordering,
/// back-pressure, streaming and closing, step by step with no socket and no timing.
@Suite struct ConnectionHandlerEmbeddedTests {
    /// An agent whose answers the test scripts, recording what the handler asks of it.
    final class ScriptedAgent: ConnectionAgent {
        let limits: ConnectionLimits
        var answer: (VarlinkCallMessage, AgentConnection) -> CallOutcome = { _, connection in
            .reply(ReplyEncoder(allocator: connection.channel.allocator).empty())
        }
        private(set) var dispatched: [String] = []
        private(set) var closed: [ConnectionID] = []
        private(set) var writableCalls = 0

        init(limits: ConnectionLimits) { self.limits = limits }

        func connectionOpened(context: ChannelHandlerContext, identity: PeerIdentity, pidfd: Pidfd?) -> Result<
            AgentConnection, VarlinkError
        > {
            .success(AgentConnection(id: 7, identity: identity, pidfd: pidfd, context: context))
        }

        func dispatch(_ message: VarlinkCallMessage, connection: AgentConnection) -> CallOutcome {
            dispatched.append(message.header.method)
            return answer(message, connection)
        }

        func connectionWritable(_ id: ConnectionID) { writableCalls += 1 }

        func connectionClosed(_ id: ConnectionID) { closed.append(id) }
    }

    /// Counts the reads that reach the socket.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        private(set) var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    struct Fixture {
        let channel = EmbeddedChannel()
        let agent: ScriptedAgent
        let reads = ReadCounter()

        init(maxPendingCalls: Int = 8, maxMessageBytes: Int = 256) throws {
            agent = ScriptedAgent(
                limits: ConnectionLimits(
                    maxMessageBytes: maxMessageBytes, maxPendingCalls: maxPendingCalls, maxQueuedEvents: 4,
                    maxConnectionsPerUID: 4))
            let identity = PeerIdentity(pid: 4242, uid: 1000, gid: 1000, executable: "/usr/bin/test-app")
            let handler = AgentConnectionHandler(agent: agent) { context in
                context.eventLoop.makeSucceededFuture((identity, nil))
            }
            try channel.pipeline.syncOperations.addHandler(reads)
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(VarlinkFrameDecoder(maxMessageBytes: maxMessageBytes)))
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        func send(_ methods: [String]) throws {
            var buffer = channel.allocator.buffer(capacity: 256)
            for method in methods {
                buffer.writeString(#"{"method":"\#(method)"}"#)
                buffer.writeInteger(UInt8(0))
            }
            try channel.writeInbound(buffer)
        }

        func replies() throws -> [String] {
            var frames: [String] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                frames.append(String(buffer: buffer))
            }
            return frames
        }
    }

    static let status = "io.cordon.Agent.GetStatus"
    static let lock = "io.cordon.Agent.Lock"

    @Test func callsAreFramedAtNULAndAnsweredInOrder() throws {
        let fixture = try Fixture()
        try fixture.send([Self.status, Self.lock])
        #expect(fixture.agent.dispatched == [Self.status, Self.lock])
        #expect(try fixture.replies().count == 2)
    }

    @Test func pipelinedCallsWaitForADeferredReply() throws {
        let fixture = try Fixture()
        let promise = fixture.channel.eventLoop.makePromise(of: ByteBuffer.self)
        fixture.agent.answer = { message, connection in
            message.header.method == Self.status
                ? .deferred(promise.futureResult)
                : .reply(ReplyEncoder(allocator: connection.channel.allocator).empty())
        }
        try fixture.send([Self.status, Self.lock])
        #expect(fixture.agent.dispatched == [Self.status], "the second call waits")
        #expect(try fixture.replies().isEmpty)
        promise.succeed(ReplyEncoder(allocator: fixture.channel.allocator).reply(["first": true]))
        #expect(fixture.agent.dispatched == [Self.status, Self.lock])
        let replies = try fixture.replies()
        #expect(replies.count == 2)
        #expect(replies.first?.contains("first") == true, "replies keep the calls' order")
    }

    @Test func aFullBacklogStopsReadingUntilItDrains() throws {
        let fixture = try Fixture(maxPendingCalls: 4)
        let promise = fixture.channel.eventLoop.makePromise(of: ByteBuffer.self)
        fixture.agent.answer = { _, _ in .deferred(promise.futureResult) }
        try fixture.send([Self.status, Self.lock, Self.lock, Self.lock])  // one in flight, three waiting
        let before = fixture.reads.reads
        fixture.channel.read()
        #expect(fixture.reads.reads == before, "three of four waiting: the read is held")
        fixture.agent.answer = { _, connection in .reply(ReplyEncoder(allocator: connection.channel.allocator).empty())
        }
        promise.succeed(ReplyEncoder(allocator: fixture.channel.allocator).empty())
        #expect(fixture.reads.reads == before + 1, "drained: the held read goes through")
        #expect(fixture.agent.dispatched.count == 4)
    }

    @Test func aStreamingConnectionServesNoFurtherCalls() throws {
        let fixture = try Fixture()
        fixture.agent.answer = { _, _ in .streaming }
        try fixture.send(["io.cordon.App.Subscribe", Self.status])
        #expect(fixture.agent.dispatched == ["io.cordon.App.Subscribe"])
    }

    @Test func anUnwritableSocketHoldsCallsUntilItHasRoom() throws {
        let fixture = try Fixture()
        fixture.channel.isWritable = false
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched.isEmpty)
        fixture.channel.isWritable = true
        fixture.channel.pipeline.fireChannelWritabilityChanged()
        #expect(fixture.agent.dispatched == [Self.status])
        #expect(fixture.agent.writableCalls == 1)
    }

    @Test func closingWhileACallIsInFlightForgetsTheConnection() throws {
        let fixture = try Fixture()
        let promise = fixture.channel.eventLoop.makePromise(of: ByteBuffer.self)
        fixture.agent.answer = { _, _ in .deferred(promise.futureResult) }
        try fixture.send([Self.status])
        _ = try fixture.channel.finish(acceptAlreadyClosed: true)
        #expect(fixture.agent.closed == [7])
        promise.succeed(ReplyEncoder(allocator: fixture.channel.allocator).empty())
        #expect(try fixture.replies().isEmpty, "nothing is written to a closed connection")
    }

    @Test func anOversizedMessageGetsItsErrorThenTheConnectionHalfCloses() throws {
        let fixture = try Fixture(maxMessageBytes: 64)
        var buffer = fixture.channel.allocator.buffer(capacity: 128)
        buffer.writeString(String(repeating: "x", count: 100))
        try fixture.channel.writeInbound(buffer)
        let replies = try fixture.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.contains("io.cordon.Agent.MessageTooLarge") == true, "\(replies)")
        #expect(fixture.agent.dispatched.isEmpty)
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched.isEmpty, "a closing connection serves nothing more")
    }

    @Test func aMalformedCallGetsInvalidMessage() throws {
        let fixture = try Fixture()
        var buffer = fixture.channel.allocator.buffer(capacity: 16)
        buffer.writeString("not json")
        buffer.writeInteger(UInt8(0))
        try fixture.channel.writeInbound(buffer)
        let replies = try fixture.replies()
        #expect(replies.first?.contains("io.cordon.Agent.InvalidMessage") == true, "\(replies)")
    }
}
