import CordonSystem
import NIOCore

extension AgentServer {
    /// Starts the D-Bus lock triggers when configured: their thread hands every trigger to the
    /// agent's loop. Without a bus the agent runs on, and its status lists no triggers.
    func startLockTriggers() async throws {
        guard let addresses = configuration.lockTriggers else { return }
        let agent = self.agent
        let loop = agent.loop
        let triggers = BusLockTriggers(
            addresses: addresses, logger: logger,
            onTrigger: { trigger in loop.execute { agent.lockTriggerFired(trigger) } },
            onActive: { names in loop.execute { agent.activeLockTriggers = names } })
        try await loop.submit { agent.lockTriggers = triggers }.get()
        try triggers.start()
    }

    /// Stops the bus thread (before the loop goes away).
    func stopLockTriggers() async {
        let agent = self.agent
        let triggers = try? await agent.loop.submit { () -> BusLockTriggers? in
            defer { agent.lockTriggers = nil }
            return agent.lockTriggers
        }.get()
        triggers?.stop()
    }
}
