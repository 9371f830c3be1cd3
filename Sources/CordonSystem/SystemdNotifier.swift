import CSystemd

/// Tells the service manager about the daemon's state (`sd_notify`); a no-op without `NOTIFY_SOCKET`.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// Sends raw `KEY=VALUE` lines; returns whether a manager received them.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    /// `READY=1` with a status line.
    @discardableResult
    public func ready(status: String) -> Bool { notify("READY=1\nSTATUS=\(status)") }

    /// `STATUS=...`.
    @discardableResult
    public func status(_ status: String) -> Bool { notify("STATUS=\(status)") }

    /// `STOPPING=1`.
    @discardableResult
    public func stopping() -> Bool { notify("STOPPING=1\nSTATUS=stopping") }

    /// `WATCHDOG=1`: the service is alive.
    @discardableResult
    public func watchdog() -> Bool { notify("WATCHDOG=1") }

    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC` (`sd_watchdog_enabled`), nil when
    /// the manager expects no pings (no `WATCHDOG_USEC`, or `WATCHDOG_PID` names another process).
    public func watchdogPingInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec / 2))
    }
}
