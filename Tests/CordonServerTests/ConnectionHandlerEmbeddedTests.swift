import CordonLifecycle
import CordonProtocol
import CordonSystem
import CordonTransport
import NIOCore
import NIOEmbedded
import Testing

@testable import CordonServer

/// `AgentConnectionHandler` on an `EmbeddedChannel` with a scripted agent: framing, ordering,
/// back-pressure, streaming, closing and idleness, step by step with no socket, on the embedded
/// loop's clock (advanced by hand, never waited for).
@Suite struct ConnectionHandlerEmbeddedTests {
    /// An agent whose answers the test scripts, recording what the handler asks of it.
    final class ScriptedAgent: ConnectionAgent {
        let limits: ConnectionLimits
        var answer: (VarlinkCallMessage, AgentConnection) -> CallOutcome = { _, connection in
            .reply(ReplyEncoder(allocator: connection.channel.allocator).empty())
        }
        private(set) var dispatched: [String] = []
        private(set) var closed: [ConnectionID] = []
        private(set) var failing: [ConnectionID] = []
        private(set) var writableCalls = 0
        /// Whether the connection registered an app.
        var registered = false

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

        func connectionFailing(_ id: ConnectionID) { failing.append(id) }

        func isRegistered(_ id: ConnectionID) -> Bool { registered }

        func connectionClosed(_ id: ConnectionID) { closed.append(id) }

        private(set) var foreignSenders: [Int32] = []
        func foreignSender(_ sender: Int32, on id: ConnectionID) { foreignSenders.append(sender) }
    }

    /// The writer the kernel would name for each read; the peer (4242) unless a test says otherwise.
    final class ScriptedSenders: MessageSenders {
        var writer: Int32? = 4242
        private(set) var stopped = false
        /// The socket replies go straight to; none by default (every reply through NIO).
        var socket: DirectSocket?
        func lastWriter() -> Int32? { writer }
        func stop() { stopped = true }
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
        let senders = ScriptedSenders()

        init(
            maxPendingCalls: Int = 8, maxMessageBytes: Int = 256, maxPendingBytes: Int = 1 << 20,
            idleTimeout: Duration = .seconds(60), attributable: Bool = true, socket: DirectSocket? = nil
        ) throws {
            agent = ScriptedAgent(
                limits: ConnectionLimits(
                    maxMessageBytes: maxMessageBytes, maxPendingCalls: maxPendingCalls, maxQueuedEvents: 4,
                    maxConnectionsPerUID: 4, maxPendingBytes: maxPendingBytes, maxConnectionsPerProcess: 4,
                    idleConnectionTimeout: idleTimeout))
            let identity = PeerIdentity(pid: 4242, uid: 1000, gid: 1000, executable: "/usr/bin/test-app")
            let senders = senders
            senders.socket = socket
            let handler = AgentConnectionHandler(
                agent: agent, identify: { context in context.eventLoop.makeSucceededFuture((identity, nil)) },
                senders: { _ in attributable ? senders : nil })
            try channel.pipeline.syncOperations.addHandler(reads)
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

        /// A call padded to `bytes` bytes (without its NUL).
        func send(padded bytes: Int) throws {
            let prefix = #"{"method":"\#(ConnectionHandlerEmbeddedTests.status)","parameters":{"pad":""#
            let suffix = #""}}"#
            let padding = String(repeating: "x", count: bytes - prefix.utf8.count - suffix.utf8.count)
            var buffer = channel.allocator.buffer(capacity: bytes + 1)
            buffer.writeString(prefix + padding + suffix)
            buffer.writeInteger(UInt8(0))
            try channel.writeInbound(buffer)
        }

        /// Moves the embedded loop's clock on (running what falls due).
        func advance(_ amount: TimeAmount) {
            channel.embeddedEventLoop.advanceTime(by: amount)
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

    /// The handler frames its own reads: a call split anywhere across reads, even byte by byte,
    /// and a read that ends a call and starts the next, are served whole and in order; a trailing
    /// call without its NUL waits for it.
    @Test func callsSplitAcrossReadsAreServedWholeAndInOrder() throws {
        let fixture = try Fixture()
        let text = #"{"method":"\#(Self.status)"}"# + "\0" + #"{"method":"\#(Self.lock)"}"# + "\0"
        let bytes = Array(text.utf8)
        let first = bytes.count / 2 - 3
        for byte in bytes[..<first] {
            try fixture.channel.writeInbound(fixture.channel.allocator.buffer(bytes: [byte]))
        }
        #expect(fixture.agent.dispatched.isEmpty)
        try fixture.channel.writeInbound(fixture.channel.allocator.buffer(bytes: bytes[first...]))
        #expect(fixture.agent.dispatched == [Self.status, Self.lock])
        try fixture.channel.writeInbound(fixture.channel.allocator.buffer(string: #"{"method":"\#(Self.status)""#))
        #expect(fixture.agent.dispatched.count == 2, "no NUL yet")
        try fixture.channel.writeInbound(fixture.channel.allocator.buffer(bytes: [UInt8(ascii: "}"), 0]))
        #expect(fixture.agent.dispatched == [Self.status, Self.lock, Self.status])
        #expect(try fixture.replies().count == 3)
    }

    /// A message that grows past the limit across reads is refused before more of it is held.
    @Test func aMessageGrowingPastTheLimitAcrossReadsIsRefused() throws {
        let fixture = try Fixture(maxMessageBytes: 64)
        let part = String(repeating: "x", count: 30)
        for _ in 0..<3 { try fixture.channel.writeInbound(fixture.channel.allocator.buffer(string: part)) }
        let replies = try fixture.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.contains("io.cordon.Agent.MessageTooLarge") == true, "\(replies)")
        #expect(fixture.agent.dispatched.isEmpty)
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
        #expect(fixture.agent.failing == [7], "the agent hears that the connection is ending")
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched.isEmpty, "a closing connection serves nothing more")
    }

    /// A read another process wrote (a copy of the socket: a parent, a forked child, a receiver of
    /// the descriptor) is never served: the calls the peer wrote before it are answered, then the
    /// connection gets `ForeignSender` (naming both processes) and serves nothing more, not even
    /// the peer's own later calls.
    @Test func aReadWrittenByAnotherProcessIsRefusedAndEndsTheConnection() throws {
        let fixture = try Fixture()
        try fixture.send([Self.status])
        fixture.senders.writer = 5151
        try fixture.send([Self.lock])
        fixture.senders.writer = 4242
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched == [Self.status], "only the peer's first call is served")
        let replies = try fixture.replies()
        #expect(replies.count == 2, "\(replies)")
        #expect(replies.last?.contains("io.cordon.Agent.ForeignSender") == true, "\(replies)")
        #expect(replies.last?.contains(#""pid":4242"#) == true && replies.last?.contains(#""sender":5151"#) == true)
        #expect(fixture.agent.foreignSenders == [5151])
        #expect(fixture.agent.failing == [7], "the agent hears that the connection is ending")
    }

    /// Half a call from the peer completed by another process is not served either: the check is
    /// per read, not per message.
    @Test func aCallCompletedByAnotherProcessIsRefused() throws {
        let fixture = try Fixture()
        try fixture.channel.writeInbound(fixture.channel.allocator.buffer(string: #"{"method":"\#(Self.status)""#))
        fixture.senders.writer = 5151
        try fixture.channel.writeInbound(fixture.channel.allocator.buffer(bytes: [UInt8(ascii: "}"), 0]))
        #expect(fixture.agent.dispatched.isEmpty)
        #expect(try fixture.replies().first?.contains("io.cordon.Agent.ForeignSender") == true)
    }

    /// A read the kernel names no writer for (one outside the agent's PID namespace) counts as
    /// another process's.
    @Test func aReadWithoutAWriterIsRefused() throws {
        let fixture = try Fixture()
        fixture.senders.writer = nil
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched.isEmpty)
        let replies = try fixture.replies()
        #expect(replies.first?.contains("io.cordon.Agent.ForeignSender") == true, "\(replies)")
        #expect(replies.first?.contains(#""sender":0"#) == true, "\(replies)")
    }

    /// A connection whose writers cannot be told is refused before it is admitted; closing a
    /// connection stops the attribution of its descriptor.
    @Test func aConnectionWhoseWritersCannotBeToldIsRefused() throws {
        let fixture = try Fixture(attributable: false)
        let replies = try fixture.replies()
        #expect(replies.first?.contains("io.cordon.Agent.InternalError") == true, "\(replies)")
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched.isEmpty)
        let attributed = try Fixture()
        try attributed.channel.close().wait()
        #expect(attributed.senders.stopped)
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

    @Test func theByteBudgetStopsReadingWhateverTheCallCount() throws {
        let fixture = try Fixture(maxPendingCalls: 64, maxMessageBytes: 4096, maxPendingBytes: 2048)
        let promise = fixture.channel.eventLoop.makePromise(of: ByteBuffer.self)
        fixture.agent.answer = { _, _ in .deferred(promise.futureResult) }
        try fixture.send([Self.status])  // in flight
        try fixture.send(padded: 1000)
        let before = fixture.reads.reads
        fixture.channel.read()
        #expect(fixture.reads.reads == before + 1, "1,000 of 2,048 bytes waiting: keep reading")
        try fixture.send(padded: 1100)
        fixture.channel.read()
        #expect(fixture.reads.reads == before + 1, "2,100 bytes waiting, 2 calls of 64: the read is held")
        fixture.agent.answer = { _, connection in .reply(ReplyEncoder(allocator: connection.channel.allocator).empty())
        }
        promise.succeed(ReplyEncoder(allocator: fixture.channel.allocator).empty())
        #expect(fixture.reads.reads == before + 2, "drained: the held read goes through")
        #expect(fixture.agent.dispatched.count == 3)
    }

    @Test func callsSentOnAStreamingConnectionAreDropped() throws {
        let fixture = try Fixture(maxPendingCalls: 4, maxMessageBytes: 4096, maxPendingBytes: 2048)
        fixture.agent.answer = { _, _ in .streaming }
        try fixture.send(["io.cordon.App.Subscribe"])
        for _ in 0..<100 { try fixture.send(padded: 4000) }
        let before = fixture.reads.reads
        fixture.channel.read()
        #expect(fixture.reads.reads == before + 1, "still reading: nothing was buffered")
        #expect(try fixture.replies().isEmpty, "no error either: the stream goes on")
        #expect(fixture.channel.isActive)
    }

    @Test func anIdleConnectionGetsConnectionIdleOnceTheTimeoutPasses() throws {
        let fixture = try Fixture(idleTimeout: .seconds(10))
        fixture.advance(.seconds(9))
        try fixture.send([Self.status])  // activity: the clock starts again
        #expect(try fixture.replies().count == 1)
        fixture.advance(.seconds(9))
        #expect(try fixture.replies().isEmpty, "9 s since the last call")
        fixture.advance(.seconds(1))
        let replies = try fixture.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.contains(#""error":"io.cordon.Agent.ConnectionIdle""#) == true, "\(replies)")
        #expect(replies.first?.contains(#""seconds":10"#) == true, "\(replies)")
        try fixture.send([Self.status])
        #expect(fixture.agent.dispatched == [Self.status], "a closing connection serves nothing more")
    }

    @Test func aCallInFlightIsNotIdleness() throws {
        let fixture = try Fixture(idleTimeout: .seconds(10))
        let promise = fixture.channel.eventLoop.makePromise(of: ByteBuffer.self)
        fixture.agent.answer = { _, _ in .deferred(promise.futureResult) }
        try fixture.send([Self.status])
        fixture.advance(.seconds(60))
        #expect(try fixture.replies().isEmpty, "waiting for its reply (RequestUnlock may wait minutes)")
        promise.succeed(ReplyEncoder(allocator: fixture.channel.allocator).empty())
        #expect(try fixture.replies().count == 1)
        fixture.advance(.seconds(10))
        #expect(try fixture.replies().first?.contains("io.cordon.Agent.ConnectionIdle") == true)
    }

    @Test func registeredAndStreamingConnectionsAreNeverClosedForIdleness() throws {
        let registered = try Fixture(idleTimeout: .seconds(10))
        registered.agent.registered = true
        registered.advance(.hours(2))
        #expect(try registered.replies().isEmpty)
        #expect(registered.channel.isActive)

        let streaming = try Fixture(idleTimeout: .seconds(10))
        streaming.agent.answer = { _, _ in .streaming }
        try streaming.send(["io.cordon.App.Subscribe"])
        streaming.advance(.hours(2))
        #expect(try streaming.replies().isEmpty)
        #expect(streaming.channel.isActive)
    }
}
