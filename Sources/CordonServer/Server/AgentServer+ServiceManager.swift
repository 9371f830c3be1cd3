import CordonLocking
import CordonSystem
import NIOCore

extension AgentServer {
    /// Connects the agent to the service manager: `READY=1` with the status and a new `STATUS=`
    /// on every change of the lock state (the watchdog pings are `WatchdogService`'s). Without
    /// `NOTIFY_SOCKET` every message is a no-op.
    public func connectServiceManager(_ notifier: SystemdNotifier) async throws {
        let agent = self.agent
        let lastStatus = Locked<String>("")
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
    }

    /// Tells the service manager the agent is stopping and stops the status updates.
    public func disconnectServiceManager(_ notifier: SystemdNotifier) async {
        let agent = self.agent
        notifier.stopping()
        try? await loop.submit { agent.value.stateObserver = nil }.get()
    }
}
