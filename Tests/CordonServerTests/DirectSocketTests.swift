import Glibc
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import CordonServer

/// `DirectSocket`: finding a NIO channel's descriptor, the kernel's confirmation of it (a
/// number whose socket cookie differs is refused), and what one non-blocking `send` reports.
@Suite("A subscriber's socket descriptor", .timeLimit(.minutes(1)))
struct DirectSocketTests {
    private static let logger = Logger(label: "cordon.test.direct-socket")

    /// A system call that failed while setting a test up.
    private struct SetupFailed: Error {
        let call: String
        let errno: CInt
    }

    /// A connected pair of Unix stream sockets.
    private static func socketPair() throws -> (CInt, CInt) {
        var fds: [CInt] = [-1, -1]
        let result = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        guard result == 0 else { throw SetupFailed(call: "socketpair", errno: errno) }
        return (fds[0], fds[1])
    }

    /// Runs `body` with a NIO socket channel over one end of a socket pair (NIO owns that end)
    /// and the raw other end, on the channel's loop.
    private static func withSocketChannel<R: Sendable>(
        _ body: @escaping @Sendable (any Channel, _ ours: CInt, _ peer: CInt) throws -> R
    ) async throws -> R {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (ours, peer) = try socketPair()
        defer { close(peer) }
        do {
            let channel = try await ClientBootstrap(group: group).withConnectedSocket(ours).get()
            let result: Result<R, any Error>
            do {
                result = .success(try await channel.eventLoop.submit { try body(channel, ours, peer) }.get())
            } catch {
                result = .failure(error)
            }
            try? await channel.close()
            try await group.shutdownGracefully()
            return try result.get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    @Test func findsAndConfirmsTheChannelsOwnDescriptor() async throws {
        let (ours, reflected, located) = try await Self.withSocketChannel { channel, ours, _ in
            (ours, DirectSocket.reflectedDescriptor(of: channel), DirectSocket.locate(channel, logger: Self.logger))
        }
        #expect(reflected == ours, "NIO's layout: SocketChannel.socket.descriptor, the number NIO was given")
        #expect(located?.descriptor == ours)
    }

    @Test func aDescriptorOfAnotherSocketIsRefused() async throws {
        let (own, other, peer) = try await Self.withSocketChannel { channel, ours, peer in
            let (a, b) = try Self.socketPair()
            defer {
                close(a)
                close(b)
            }
            return (
                DirectSocket.locate(channel, logger: Self.logger) { _ in ours }?.descriptor,
                DirectSocket.locate(channel, logger: Self.logger) { _ in a }?.descriptor,
                DirectSocket.locate(channel, logger: Self.logger) { _ in peer }?.descriptor
            )
        }
        #expect(own != nil, "the right number is confirmed")
        #expect(other == nil, "an unrelated socket's cookie does not match")
        #expect(peer == nil, "nor does the other end of the same connection's")
    }

    @Test func aNumberThatIsNoSocketOrNoneIsRefused() async throws {
        let (pipeEnd, negative, missing, unused) = try await Self.withSocketChannel { channel, _, _ in
            var fds: [CInt] = [-1, -1]
            guard pipe(&fds) == 0 else { throw SetupFailed(call: "pipe", errno: errno) }
            defer {
                close(fds[0])
                close(fds[1])
            }
            // A number no descriptor uses: one just closed.
            let (a, b) = try Self.socketPair()
            close(a)
            close(b)
            return (
                DirectSocket.locate(channel, logger: Self.logger) { _ in fds[0] },
                DirectSocket.locate(channel, logger: Self.logger) { _ in -1 },
                DirectSocket.locate(channel, logger: Self.logger) { _ in nil },
                DirectSocket.locate(channel, logger: Self.logger) { _ in a }
            )
        }
        #expect(pipeEnd == nil)
        #expect(negative == nil)
        #expect(missing == nil)
        #expect(unused == nil)
    }

    @Test func aChannelWithoutASocketHasNoDescriptor() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        #expect(channel.isActive)
        #expect(DirectSocket.reflectedDescriptor(of: channel) == nil)
        #expect(DirectSocket.locate(channel, logger: Self.logger) == nil)
        _ = try channel.finish()
    }

    @Test func aClosedChannelIsNotLocated() async throws {
        let located = try await Self.withSocketChannel { channel, _, _ in
            channel.close(promise: nil)
            return DirectSocket.locate(channel, logger: Self.logger)?.descriptor
        }
        #expect(located == nil)
    }

    @Test func sendReportsWhatWentOutUntilTheSocketIsFullThenTheClosedPeer() throws {
        let (ours, peer) = try Self.socketPair()
        defer { close(ours) }
        let socket = DirectSocket(descriptor: ours)
        var frame = ByteBuffer()
        frame.writeString("{\"parameters\":{}}")
        frame.writeInteger(UInt8(0))
        #expect(socket.send(frame) == .wrote)

        // 64 KiB frames until the socket has no room: each reports all, part, or nothing.
        let large = ByteBuffer(repeating: 0x41, count: 64 * 1024)
        var sent = frame.readableBytes
        var outcomes: [DirectSocket.Outcome] = []
        while outcomes.last != .wouldBlock && outcomes.count < 1000 {
            let outcome = socket.send(large)
            switch outcome {
            case .wrote: sent += large.readableBytes
            case .partial(let count): sent += count
            case .wouldBlock: break
            case .failed(let code): Issue.record("send failed: errno \(code)")
            }
            outcomes.append(outcome)
        }
        #expect(outcomes.last == .wouldBlock, "\(outcomes.count) sends")
        if case .partial(let count) = outcomes.dropLast().last {
            #expect(count > 0 && count < large.readableBytes)
        }

        // The peer reads exactly what the outcomes reported, the small frame first.
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            received += chunk[..<count]
        }
        #expect(received.count == sent)
        #expect(Array(received.prefix(frame.readableBytes)) == Array(frame.readableBytesView))

        close(peer)
        #expect(socket.send(frame) == .failed(EPIPE), "the peer is gone: EPIPE, and no SIGPIPE")
    }
}
