import CordonSystem
import Foundation
import Testing

/// `SocketOwner`: the kernel's socket diagnostics name the uid of the socket at the other end of
/// a loopback connection (docs/components/pinned-channel.md, "Channel and tunnel").
@Suite struct SocketOwnerTests {
    static let nobody: uid_t = 65534
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// A listener on 127.0.0.1, a client started by `command` (a Python connecting to it, then
    /// waiting for its stdin to close) and the connection it made, as the accepting side sees it.
    struct Connection {
        let listener: Int32
        let accepted: Int32
        let client: Process
        let stdin: Pipe

        init(_ prefix: [String], closeAtOnce: Bool = false) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.listener = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try Self.check(
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
                })
            try Self.check(listen(listener, 4))
            try Self.check(
                withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
                })
            let hold = closeAtOnce ? "" : "; sys.stdin.read()"
            let command =
                prefix + [
                    "/usr/bin/python3", "-c",
                    "import socket, sys; s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\(hold)",
                    "\(UInt16(bigEndian: address.sin_port))",
                ]
            let client = Process()
            client.executableURL = URL(fileURLWithPath: command[0])
            client.arguments = Array(command.dropFirst())
            let stdin = Pipe()
            client.standardInput = stdin
            try client.run()
            self.client = client
            self.stdin = stdin
            // Waits for the connection, or for the client to fail.
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            while poll(&ready, 1, 100) == 0 {
                guard client.isRunning else { throw POSIXError(.ECONNREFUSED) }
            }
            accepted = accept(listener, nil, nil)
            try Self.check(accepted)
        }

        /// The owner of the connecting socket, as `SocketOwner` reads it.
        func owner() throws -> uid_t {
            var peer = sockaddr_in()
            var own = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try Self.check(
                withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(accepted, $0, &length) }
                })
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try Self.check(
                withUnsafeMutablePointer(to: &own) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(accepted, $0, &length) }
                })
            return try SocketOwner.uid(connectingFrom: peer, to: own)
        }

        func close() {
            try? stdin.fileHandleForWriting.close()
            client.waitUntilExit()
            Glibc.close(accepted)
            Glibc.close(listener)
        }

        static func check(_ result: Int32) throws {
            guard result >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    @Test func aConnectionOfThisProcesssUserIsItsUsers() throws {
        let connection = try Connection([])
        defer { connection.close() }
        #expect(try connection.owner() == getuid())
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run the client as another uid"))
    func aConnectionOfAnotherUserIsThatUsers() throws {
        let connection = try Connection(Self.asNobody)
        defer { connection.close() }
        #expect(try connection.owner() == Self.nobody)
    }

    /// A client that has closed its socket leaves only an orphan (or a TIME_WAIT entry, which the
    /// kernel reports as uid 0): nobody's, and said so rather than taken for root.
    @Test func aSocketNoProcessHoldsHasNoOwner() throws {
        let connection = try Connection(getuid() == 0 ? Self.asNobody : [], closeAtOnce: true)
        defer { connection.close() }
        connection.client.waitUntilExit()
        #expect(throws: SocketOwner.LookupError(code: ENOENT)) { try connection.owner() }
    }
}
