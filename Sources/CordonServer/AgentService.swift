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
        notifier.ready(status: (try? await server.statusLine()) ?? "ready")
        try? await gracefulShutdown()
        notifier.stopping()
        try await server.stop()
    }
}
