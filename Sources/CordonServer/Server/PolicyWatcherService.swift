import CordonSystem
import NIOCore
import ServiceLifecycle

/// Watches the admin, user and trust directories (inotify) and has the policy host reload
/// when they change, until shutdown. Without policy directories it only waits for shutdown.
public struct PolicyWatcherService: Service {
    private let server: AgentServer

    public init(server: AgentServer) {
        self.server = server
    }

    public func run() async throws {
        let agent = server.agent
        try await server.loop.submit { agent.value.policyHost.startWatcher() }.get()
        try? await gracefulShutdown()
        try? await server.loop.submit { agent.value.policyHost.shutdown() }.get()
    }
}
