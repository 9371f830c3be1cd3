import NIOCore
import NIOEmbedded
import Testing

@testable import CordonRun

/// `GlueHandler` between two embedded channels on one loop, as a tunnel glues the program's
/// connection to the upstream (docs/ARCHITECTURE.md, "Pinned channel"): bytes both ways, reads held
/// while the partner cannot write, and one side's close closing the other.
@Suite struct GlueHandlerTests {
    /// Counts the reads the glue asks of its channel (it sits between the glue and the head).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    struct Glued {
        let loop = EmbeddedEventLoop()
        let local: EmbeddedChannel
        let remote: EmbeddedChannel
        let localReads = ReadCounter()

        init() throws {
            local = EmbeddedChannel(loop: loop)
            remote = EmbeddedChannel(loop: loop)
            let (inner, outer) = GlueHandler.matchedPair()
            try local.pipeline.syncOperations.addHandler(localReads)
            try local.pipeline.syncOperations.addHandler(inner)
            try remote.pipeline.syncOperations.addHandler(outer)
            try local.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            try remote.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
        }

        func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
    }

    @Test func bytesGoBothWays() throws {
        let glued = try Glued()
        try glued.local.writeInbound(glued.buffer("GET / HTTP/1.1\r\n"))
        #expect(try glued.remote.readOutbound(as: ByteBuffer.self) == glued.buffer("GET / HTTP/1.1\r\n"))
        try glued.remote.writeInbound(glued.buffer("HTTP/1.1 200 OK\r\n"))
        #expect(try glued.local.readOutbound(as: ByteBuffer.self) == glued.buffer("HTTP/1.1 200 OK\r\n"))
        #expect(try glued.local.readInbound(as: ByteBuffer.self) == nil, "nothing goes past the glue")
    }

    @Test func aReadWaitsUntilThePartnerCanWrite() throws {
        let glued = try Glued()
        glued.local.read()
        #expect(glued.localReads.reads == 1, "the partner is writable: the read goes through")
        glued.remote.isWritable = false
        glued.remote.pipeline.fireChannelWritabilityChanged()
        glued.local.read()
        #expect(glued.localReads.reads == 1, "held while the partner cannot write")
        glued.remote.isWritable = true
        glued.remote.pipeline.fireChannelWritabilityChanged()
        #expect(glued.localReads.reads == 2, "the held read goes through once it can")
        glued.remote.pipeline.fireChannelWritabilityChanged()
        #expect(glued.localReads.reads == 2, "and only once")
    }

    @Test func aCloseOnOneSideClosesTheOther() throws {
        let glued = try Glued()
        try glued.remote.close().wait()
        glued.loop.run()
        #expect(!glued.local.isActive)
    }

    @Test func anErrorClosesBothSides() throws {
        let glued = try Glued()
        glued.local.pipeline.fireErrorCaught(ChannelError.ioOnClosedChannel)
        glued.loop.run()
        #expect(!glued.local.isActive)
        #expect(!glued.remote.isActive)
    }
}
