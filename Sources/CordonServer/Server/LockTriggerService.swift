import ServiceLifecycle

/// Locks the container on the desktop's signals (logind lock, idle and sleep, the screen
/// savers) over D-Bus, from start until shutdown, when bus addresses are configured.
public struct LockTriggerService: Service {
    private let server: AgentServer

    public init(server: AgentServer) {
        self.server = server
    }

    public func run() async throws {
        try await server.startLockTriggers()
        try? await gracefulShutdown()
        // Before the agent's loop goes away: the bus thread hands triggers to it.
        await server.stopLockTriggers()
    }
}
