import CordonSystem
import Logging
import NIOCore
import ServiceLifecycle

/// Pings the service manager's watchdog (`WATCHDOG=1`) when it asks for pings, as a repeated
/// task on the agent's own event loop: a loop that hangs stops pinging, and the manager
/// restarts the agent. Without `WATCHDOG_USEC` it only waits for shutdown.
public struct WatchdogService: Service {
    private let server: AgentServer
    private let notifier: SystemdNotifier

    public init(server: AgentServer, notifier: SystemdNotifier = SystemdNotifier()) {
        self.server = server
        self.notifier = notifier
    }

    public func run() async throws {
        var task: RepeatedTask?
        if let interval = notifier.watchdogPingInterval() {
            let ping =
                TimeAmount.nanoseconds(Int64(clamping: interval.components.seconds * 1_000_000_000))
                + .nanoseconds(interval.components.attoseconds / 1_000_000_000)
            let notifier = self.notifier
            task = server.loop.scheduleRepeatedTask(initialDelay: .zero, delay: ping) { _ in notifier.watchdog() }
            server.logger.info("watchdog pings enabled", metadata: ["intervalMs": "\(ping.nanoseconds / 1_000_000)"])
        }
        try? await gracefulShutdown()
        task?.cancel()
    }
}
