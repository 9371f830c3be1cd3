import CordonSystem
import NIOCore

extension AgentServer {
    /// Starts the D-Bus lock triggers when configured: their thread hands every trigger to the
    /// agent's loop. Without a bus the agent runs on, and its status lists no triggers.
    func startLockTriggers() async throws {
        guard let addresses = configuration.lockTriggers else { return }
        let agent = self.agent
        let loop = self.loop
        // The bus thread calls back: it reaches the agent only back on the loop.
        let triggers = BusLockTriggers(
            addresses: addresses, logger: logger,
            onTrigger: { trigger in loop.execute { agent.value.lockTriggers.fired(trigger) } },
            onActive: { names in loop.execute { agent.value.lockTriggers.active = names } })
        try await loop.submit { agent.value.lockTriggers.triggers = triggers }.get()
        try triggers.start()
    }

    /// Stops the bus thread (before the loop goes away).
    func stopLockTriggers() async {
        let agent = self.agent
        let triggers = try? await loop.submit { () -> BusLockTriggers? in
            defer { agent.value.lockTriggers.triggers = nil }
            return agent.value.lockTriggers.triggers
        }.get()
        triggers?.stop()
    }
}
