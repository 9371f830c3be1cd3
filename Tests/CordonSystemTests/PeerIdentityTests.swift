import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PeerIdentityTests {
    /// A connected socket pair: both ends belong to this process.
    func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw SystemError(operation: "socketpair", errno: errno)
        }
        return (fds[0], fds[1])
    }

    @Test func identifiesThisProcess() throws {
        let (a, b) = try socketPair()
        defer {
            close(a)
            close(b)
        }
        let (identity, pidfd) = try PeerIdentity.of(socket: a)
        #expect(identity.pid == getpid())
        #expect(identity.uid == getuid())
        #expect(identity.gid == getgid())
        #expect(identity.executable == ProcessInfoReader.executable(of: getpid()))
        #expect(!identity.executable.isEmpty)
        let handle = try #require(pidfd)
        #expect(handle.isAlive)
    }

    @Test func notASocketIsAnError() {
        #expect(throws: SystemError.self) { try PeerIdentity.of(socket: 0x7fff_0000) }
    }

    @Test func pidfdOfAnExitedProcessIsNotAlive() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        let pidfd = try #require(Pidfd(pid: process.processIdentifier))
        #expect(pidfd.isAlive)
        try pidfd.send(signal: SIGKILL)
        process.waitUntilExit()
        #expect(!pidfd.isAlive)
        #expect(throws: SystemError.self) { try pidfd.send(signal: SIGTERM) }
    }

    @Test func pidfdSignalsExactlyItsProcess() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        let pidfd = try #require(Pidfd(pid: process.processIdentifier))
        try pidfd.send(signal: SIGSTOP)
        var state: Character?
        for _ in 0..<500 where state != "T" {
            state = ProcessInfoReader.state(of: process.processIdentifier)
            usleep(2000)
        }
        #expect(state == "T", "the process is stopped")
        try pidfd.send(signal: SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
    }

    @Test func invalidDescriptorIsNotAdopted() {
        #expect(Pidfd(adopting: -1) == nil)
    }
}
