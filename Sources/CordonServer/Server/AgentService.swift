import CordonSystem
import Logging
import ServiceLifecycle

/// Runs an `AgentServer` under swift-service-lifecycle: start, notify, wait for shutdown, stop.
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
        try await server.stop()
    }
}
