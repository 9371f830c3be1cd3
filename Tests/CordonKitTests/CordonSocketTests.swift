import CordonKit
import CordonProtocol
import Foundation
import Testing

@Suite("Finding and reaching the agent")
struct CordonSocketTests {
    @Test func clientSocketPathPrefersCordonSocket() {
        let environment = [
            "CORDON_SOCKET": "/tmp/custom.sock", "XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u",
        ]
        #expect(CordonPaths.clientSocketPath(environment: environment, uid: 1000) == "/tmp/custom.sock")
    }

    @Test func clientSocketPathFallsBackToTheRuntimeDirectory() {
        #expect(
            CordonPaths.clientSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000)
                == "/run/user/1000/cordon/agent.sock")
        #expect(
            CordonPaths.clientSocketPath(environment: ["CORDON_SOCKET": "", "CORDON_RUNTIME_DIR": "/x"], uid: 5)
                == "/x/agent.sock")
        #expect(CordonPaths.clientSocketPath(environment: [:], uid: 1234) == "/run/user/1234/cordon/agent.sock")
    }

    /// `CORDON_SOCKET` precedence is checked on the pure function above: tests never mutate the
    /// shared process environment, which parallel tests read.
    @Test func defaultPathHonoursTheEnvironment() {
        let expected = CordonPaths.clientSocketPath(
            environment: ProcessInfo.processInfo.environment, uid: UInt32(getuid()))
        #expect(CordonSocket.defaultPath == expected)
    }

    @Test func connectingToNothingIsAgentUnavailable() async throws {
        let path = "/tmp/cordon-kit-missing-\(UUID().uuidString.prefix(8))/agent.sock"
        let error = await #expect(throws: CordonClientError.self) {
            _ = try await CordonClient.connect(socketPath: path)
        }
        guard case .agentUnavailable(let socket, let reason) = error else {
            Issue.record("expected agentUnavailable, got \(String(describing: error))")
            return
        }
        #expect(socket == path)
        #expect(!reason.isEmpty)
        #expect(error?.description.hasPrefix("cannot reach cordond at \(path)") == true)
    }

    @Test func appConnectToNothingIsAgentUnavailable() async throws {
        let path = "/tmp/cordon-kit-missing-\(UUID().uuidString.prefix(8))/agent.sock"
        let error = await #expect(throws: CordonClientError.self) {
            _ = try await CordonApp.connect(appId: "com.example.notes", socketPath: path)
        }
        guard case .agentUnavailable = error else {
            Issue.record("expected agentUnavailable, got \(String(describing: error))")
            return
        }
    }
}
