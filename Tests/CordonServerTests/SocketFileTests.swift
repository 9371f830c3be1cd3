import CordonKit
import CordonProtocol
import CordonServer
import Foundation
import Glibc
import Testing

@Suite("The socket file", .timeLimit(.minutes(2)))
struct SocketFileTests {
    private func mode(_ path: String) throws -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw RawSocketError.system("lstat(\(path))", errno) }
        return info.st_mode
    }

    @Test func socketIsPrivate() async throws {
        try await withTestAgent { agent in
            let socket = try mode(agent.socketPath)
            #expect(socket & S_IFMT == S_IFSOCK)
            #expect(socket & 0o777 == 0o600)
            let directory = try mode(agent.paths.runtimeDirectory)
            #expect(directory & S_IFMT == S_IFDIR)
            #expect(directory & 0o777 == 0o700)
        }
    }

    @Test func runtimeDirectoryIsTightened() async throws {
        try await withTestAgent { agent in
            try await agent.stop()
            chmod(agent.paths.runtimeDirectory, 0o755)
            let server = try AgentServer(configuration: agent.configuration, logger: agent.logger(label: "again"))
            try await server.start()
            #expect(try mode(agent.paths.runtimeDirectory) & 0o777 == 0o700)
            try await server.stop()
        }
    }

    @Test func liveSocketIsNotStolenAndStaleOneIsReplaced() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")

            // A second agent on the same paths must not take over the live socket.
            let second = try AgentServer(configuration: agent.configuration, logger: agent.logger(label: "second"))
            let error = await #expect(throws: (any Error).self) { try await second.start() }
            #expect(String(describing: error).contains("already listening"), "\(String(describing: error))")
            #expect(try await client.status().state == .lockedNoKey)
            let fresh = try await agent.client()
            #expect(try await fresh.status().state == .lockedNoKey)
            await fresh.close()
            await client.close()

            try await agent.stop()
            try await second.stop()  // Never started: only releases its threads.
            #expect(!FileManager.default.fileExists(atPath: agent.socketPath))

            // A socket file nobody listens on (as a crashed agent leaves it).
            let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            #expect(stale >= 0)
            var address = try RawSocket.address(agent.socketPath)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            #expect(bound == 0)
            close(stale)
            #expect(try mode(agent.socketPath) & S_IFMT == S_IFSOCK)
            #expect(throws: (any Error).self) { _ = try RawSocket(path: agent.socketPath) }

            let third = try AgentServer(configuration: agent.configuration, logger: agent.logger(label: "third"))
            try await third.start()
            #expect(try mode(agent.socketPath) & 0o777 == 0o600)
            let again = try await CordonClient.connect(socketPath: agent.socketPath)
            // The same database: still initialized.
            #expect(try await again.status().state == .lockedNoKey)
            await again.close()
            try await third.stop()
        }
    }

    @Test func stoppingAServerThatNeverStartedLeavesTheLiveSocket() async throws {
        try await withTestAgent { agent in
            let second = try AgentServer(configuration: agent.configuration, logger: agent.logger(label: "second"))
            await #expect(throws: (any Error).self) { try await second.start() }
            try await second.stop()
            #expect(FileManager.default.fileExists(atPath: agent.socketPath))
            // New clients still find the live agent.
            let raw = try agent.raw()
            #expect(try raw.call(#"{"method":"io.cordon.Agent.GetStatus"}"#).error == nil)
        }
    }

    @Test func somethingElseAtTheSocketPathIsNotRemoved() async throws {
        try await withTestAgent { agent in
            try await agent.stop()
            #expect(FileManager.default.createFile(atPath: agent.socketPath, contents: Data("keep".utf8)))
            let server = try AgentServer(configuration: agent.configuration, logger: agent.logger(label: "again"))
            await #expect(throws: (any Error).self) { try await server.start() }
            #expect(FileManager.default.contents(atPath: agent.socketPath) == Data("keep".utf8))
            try await server.stop()
        }
    }
}
