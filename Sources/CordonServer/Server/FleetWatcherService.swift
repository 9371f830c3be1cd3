import NIOCore
import ServiceLifecycle

/// Watches cordon-fleetd's directory (inotify) and has the fleet component execute new commands,
/// until shutdown; the first pass performs again a command a kill left `executing`.
public struct FleetWatcherService: Service {
    private let server: AgentServer

    public init(server: AgentServer) {
        self.server = server
    }

    public func run() async throws {
        let agent = server.agent
        try await server.loop.submit { agent.value.fleet.start() }.get()
        try? await gracefulShutdown()
        try? await server.loop.submit { agent.value.fleet.shutdown() }.get()
    }
}
