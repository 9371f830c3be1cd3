import CordonSystem
import Logging
import ServiceLifecycle

/// Runs an `AgentServer` under swift-service-lifecycle: start, notify, wait for shutdown, stop
/// serving. The group's owner calls `AgentServer.finish()` after the group returns, whether or not
/// the start succeeded.
public struct AgentService: Service {
    private let server: AgentServer
    private let notifier = SystemdNotifier()

    public init(server: AgentServer) {
        self.server = server
    }

    public func run() async throws {
        try await server.start()
        try await server.connectServiceManager(notifier)
        try? await gracefulShutdown()
        await server.disconnectServiceManager(notifier)
        // The loop goes on for the services still stopping; whoever runs the group calls
        // `server.finish()` once it returns.
        try await server.stopServing()
    }
}
