import Glibc
import NIOCore
import NIOEmbedded
import Testing

@testable import CordonServer

/// `AgentConnectionHandler`'s replies past NIO: with one `send` on the connection's socket while
/// NIO holds nothing of the connection's, through NIO otherwise, and never out of order. The
/// handler runs on an `EmbeddedChannel` (which completes a write when it is flushed) and its
/// socket is one end of a real socket pair, read at the other end.
@Suite("Replies past NIO", .timeLimit(.minutes(1)))
struct ConnectionHandlerDirectWriteTests {
    typealias Fixture = ConnectionHandlerEmbeddedTests.Fixture

    /// A system call that failed while setting a test up.
    private struct SetupFailed: Error {
        let call: String
        let errno: CInt
    }

    /// A connected pair of Unix stream sockets: the handler's end and the peer's, closed together.
    private final class SocketPair {
        let ours: CInt
        let peer: CInt

        init() throws {
            var fds: [CInt] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw SetupFailed(call: "socketpair", errno: errno)
            }
            (ours, peer) = (fds[0], fds[1])
        }

        deinit {
            close(ours)
            close(peer)
        }

        /// Everything the peer can read now.
        func drain() -> [UInt8] {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { return received }
                received += chunk[..<count]
            }
        }

        /// Fills the handler's end until the kernel takes no more; how many bytes it took.
        func fill() -> Int {
            let block = [UInt8](repeating: 0x2E, count: 64 * 1024)
            var total = 0
            while true {
                let sent = block.withUnsafeBytes { send(ours, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard sent > 0 else { return total }
                total += sent
            }
        }
    }

    /// An agent answering each call with a frame naming its method.
    private static func namingAnswers(_ fixture: Fixture) {
        fixture.agent.answer = { message, connection in
            var frame = connection.channel.allocator.buffer(capacity: 64)
            frame.writeString(Self.reply(message.header.method))
            frame.writeInteger(UInt8(0))
            return .reply(frame)
        }
    }

    private static func reply(_ method: String) -> String { #"{"parameters":{"method":"\#(method)"}}"# }

    /// The bytes `methods`' replies make on the wire.
    private static func wire(_ methods: [String]) -> [UInt8] {
        methods.flatMap { Array(reply($0).utf8) + [0] }
    }

    private static let status = ConnectionHandlerEmbeddedTests.status
    private static let lock = ConnectionHandlerEmbeddedTests.lock

    @Test func repliesGoStraightToTheSocketWhileNIOHoldsNothing() throws {
        let pair = try SocketPair()
        let fixture = try Fixture(socket: DirectSocket(descriptor: pair.ours))
        Self.namingAnswers(fixture)
        try fixture.send([Self.status, Self.lock])
        try fixture.send([Self.status])
        #expect(try fixture.replies().isEmpty, "nothing went through NIO")
        #expect(pair.drain() == Self.wire([Self.status, Self.lock, Self.status]))
    }

    /// A socket with no room: the reply goes through NIO, and so does the next one while NIO
    /// still holds the first; once NIO has completed them, replies go straight out again.
    @Test func aFullSocketSendsRepliesThroughNIOInOrderThenStraightAgain() throws {
        let pair = try SocketPair()
        let fixture = try Fixture(socket: DirectSocket(descriptor: pair.ours))
        Self.namingAnswers(fixture)
        let filled = pair.fill()
        #expect(filled > 0)
        try fixture.send([Self.status, Self.lock])
        #expect(try fixture.replies() == [Self.reply(Self.status) + "\0", Self.reply(Self.lock) + "\0"])
        #expect(pair.drain().count == filled, "only the filler reached the socket")
        try fixture.send([Self.lock])
        #expect(try fixture.replies().isEmpty)
        #expect(pair.drain() == Self.wire([Self.lock]))
    }

    /// A write NIO holds unflushed (one passing through the handler, as the agent's shutdown
    /// writes): the next reply queues behind it in NIO instead of overtaking it on the socket.
    @Test func aReplyNeverOvertakesAWriteNIOStillHolds() throws {
        let pair = try SocketPair()
        let fixture = try Fixture(socket: DirectSocket(descriptor: pair.ours))
        Self.namingAnswers(fixture)
        fixture.channel.write(ByteBuffer(string: "earlier\0"), promise: nil)
        try fixture.send([Self.status])
        #expect(try fixture.replies() == ["earlier\0", Self.reply(Self.status) + "\0"])
        #expect(pair.drain().isEmpty)
        try fixture.send([Self.status])
        #expect(pair.drain() == Self.wire([Self.status]), "NIO completed both: straight out again")
    }

    /// The final error of a failing connection goes through NIO, after the replies before it.
    @Test func aFailingConnectionsLastWordGoesThroughNIO() throws {
        let pair = try SocketPair()
        let fixture = try Fixture(maxMessageBytes: 64, socket: DirectSocket(descriptor: pair.ours))
        Self.namingAnswers(fixture)
        try fixture.send([Self.status])
        try fixture.send(padded: 200)
        #expect(pair.drain() == Self.wire([Self.status]))
        let last = try fixture.replies()
        #expect(last.count == 1 && last[0].contains("io.cordon.Agent.MessageTooLarge"), "\(last)")
    }
}
