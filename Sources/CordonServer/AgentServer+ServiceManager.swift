import CordonSystem
import NIOCore
import Synchronization

extension AgentServer {
    /// Connects the agent to the service manager: `READY=1` with the status, a new `STATUS=`
    /// on every change of the lock state, and `WATCHDOG=1` pings when the manager asks for them.
    ///
    /// The pings run as a repeated task on the agent's own event loop, so a loop that hangs
    /// stops pinging and the manager's watchdog restarts the agent. Without `NOTIFY_SOCKET`
    /// every message is a no-op.
    public func connectServiceManager(_ notifier: SystemdNotifier) async throws {
        let agent = self.agent
        let interval = notifier.watchdogPingInterval()
        let lastStatus = Mutex<String>("")
        try await loop.submit {
            let line = Self.statusLine(of: agent.value)
            lastStatus.withLock { $0 = line }
            notifier.ready(status: line)
            agent.value.stateObserver = {
                let line = Self.statusLine(of: agent.value)
                let changed = lastStatus.withLock { last -> Bool in
                    defer { last = line }
                    return last != line
                }
                if changed { notifier.status(line) }
            }
        }.get()
        guard let interval else { return }
        let ping =
            TimeAmount.nanoseconds(Int64(clamping: interval.components.seconds * 1_000_000_000))
            + .nanoseconds(interval.components.attoseconds / 1_000_000_000)
        let task = loop.scheduleRepeatedTask(initialDelay: .zero, delay: ping) { _ in
            notifier.watchdog()
        }
        watchdogTask.withLock { $0 = task }
        logger.info("watchdog pings enabled", metadata: ["intervalMs": "\(ping.nanoseconds / 1_000_000)"])
    }

    /// Tells the service manager the agent is stopping and stops the status updates.
    public func disconnectServiceManager(_ notifier: SystemdNotifier) async {
        let agent = self.agent
        notifier.stopping()
        try? await loop.submit { agent.value.stateObserver = nil }.get()
    }
}
