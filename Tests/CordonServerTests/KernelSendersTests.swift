import CCordonSenders
import CordonSystem
import Foundation
import Glibc
import Testing

/// The agent's `read` (`CCordonSenders`, docs/ARCHITECTURE.md "Who wrote a message"): on a socket
/// it marked, each read returns one writer's bytes and keeps the process the kernel names for
/// them; every other descriptor reads as before.
@Suite struct KernelSendersTests {
    /// A connected pair of Unix stream sockets; the first is the agent's end, marked.
    final class Pair {
        let agent: CInt
        let client: CInt
        let cookie: UInt64

        init() throws {
            var ends: [CInt] = [-1, -1]
            let made = socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends)
            agent = ends[0]
            client = ends[1]
            var value: UInt64 = 0
            var length = socklen_t(MemoryLayout<UInt64>.size)
            let read = getsockopt(ends[0], SOL_SOCKET, DescriptorPassing.cookieOption, &value, &length)
            cookie = value
            try #require(made == 0 && read == 0)
            try #require(cordon_senders_attribute(agent, cookie) == 0)
        }

        deinit {
            cordon_senders_forget(agent, cookie)
            close(agent)
            close(client)
        }

        /// One read on the agent's end: the bytes and the writer it names.
        func read() -> (String, pid_t) {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(agent, $0.baseAddress, $0.count) }
            return (String(decoding: buffer[..<max(count, 0)], as: UTF8.self), cordon_senders_last(agent, cookie))
        }
    }

    /// Runs `/bin/sh -c script` with its standard output on `descriptor`; returns its pid once it
    /// has exited.
    static func runWriting(_ script: String, to descriptor: CInt) throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Two writers' bytes queued back to back come out in two reads, each naming its writer.
    @Test func eachReadNamesItsWriterAndTwoWritersAreNeverGlued() throws {
        let pair = try Pair()
        #expect(cordon_senders_last(pair.agent, pair.cookie) == -1, "nothing read yet")
        #expect(write(pair.client, "mine", 4) == 4)
        let child = try Self.runWriting("printf theirs", to: pair.client)
        #expect(write(pair.client, "again", 5) == 5)
        let first = pair.read()
        #expect(first.0 == "mine" && first.1 == getpid(), "\(first)")
        let second = pair.read()
        #expect(second.0 == "theirs" && second.1 == child, "\(second) child \(child)")
        let third = pair.read()
        #expect(third.0 == "again" && third.1 == getpid(), "\(third)")
    }

    /// A descriptor that is not marked reads as it always did, and names no writer.
    @Test func anUnmarkedDescriptorReadsAsBefore() throws {
        var ends: [CInt] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        #expect(write(ends[1], "plain", 5) == 5)
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(ends[0], $0.baseAddress, $0.count) }
        #expect(String(decoding: buffer[..<max(count, 0)], as: UTF8.self) == "plain")
        #expect(buffer.withUnsafeMutableBytes { Glibc.read(ends[0], $0.baseAddress, $0.count) } == 0)
        #expect(cordon_senders_last(ends[0], 1) == -1)
    }

    /// The mark is the socket's, not its number's: forgetting it for another socket's cookie (a
    /// number NIO closed and the kernel gave to a new connection) leaves it; asking with another
    /// cookie names nobody.
    @Test func theMarkBelongsToTheSocketsCookie() throws {
        let pair = try Pair()
        cordon_senders_forget(pair.agent, pair.cookie &+ 1)
        #expect(write(pair.client, "x", 1) == 1)
        #expect(pair.read().1 == getpid())
        #expect(cordon_senders_last(pair.agent, pair.cookie &+ 1) == -1)
        cordon_senders_forget(pair.agent, pair.cookie)
        #expect(cordon_senders_last(pair.agent, pair.cookie) == -1)
        #expect(cordon_senders_attribute(-1, pair.cookie) == -ERANGE)
        #expect(cordon_senders_attribute(pair.agent, 0) == -EINVAL)
    }

    /// A writer that attaches descriptors (`SCM_RIGHTS`) leaves none open in the agent: the write
    /// end of a pipe passed on a marked socket is closed by the read, so the pipe ends.
    @Test func descriptorsPassedOnAMarkedSocketAreClosed() throws {
        let pair = try Pair()
        var ends: [CInt] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = try DescriptorPassing.send(Array("fd".utf8), on: pair.client, attaching: ends[1])
        close(ends[1])
        let (text, writer) = pair.read()
        #expect(text == "fd" && writer == getpid())
        var byte: UInt8 = 0
        #expect(Glibc.read(ends[0], &byte, 1) == 0, "the passed write end is still open somewhere")
    }
}
