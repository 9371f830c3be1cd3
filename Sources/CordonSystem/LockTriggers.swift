import CCordonLinux
import CordonLocking
import Dispatch
import Foundation
import Logging

/// What a desktop or system signal asks of the agent.
public enum LockTrigger: Sendable, Equatable {
    /// The screen locked: logind's `Session.Lock` or `LockedHint`, or a screen saver's
    /// `ActiveChanged(true)`; `source` names which.
    case screenLock(source: String)
    /// The session went idle (logind's `IdleHint`).
    case idle
    /// The system is about to sleep (`PrepareForSleep(true)`): lock, then call
    /// `BusLockTriggers.releaseSleepInhibitor()` so the sleep can go on.
    case suspend
    /// The system woke up (`PrepareForSleep(false)`): not a lock; the agent reads the device's
    /// posture again.
    case resume
}

/// Where the lock triggers look for the buses; nil uses the standard address.
public struct LockTriggerAddresses: Sendable, Equatable {
    /// The system bus (logind, fprintd); nil: the system's own (never `DBUS_SYSTEM_BUS_ADDRESS`).
    public var system: String?
    /// The session bus (screen savers); nil: `sd_bus_open_user` (or `DBUS_SESSION_BUS_ADDRESS`).
    public var session: String?
    /// The logind session to watch; nil: the session of this process.
    public var sessionID: String?

    /// Addresses for the buses and the session; nil or empty means the default.
    public init(system: String? = nil, session: String? = nil, sessionID: String? = nil) {
        self.system = system.flatMap { $0.isEmpty ? nil : $0 }
        self.session = session.flatMap { $0.isEmpty ? nil : $0 }
        self.sessionID = sessionID.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The lock triggers from D-Bus (logind on the system bus, the screen savers on the session
/// bus), run by sd-bus on a thread of their own.
///
/// Triggers are handed to `onTrigger` on that thread; the receiver hops to its own loop. A
/// `delay` sleep inhibitor is held while the system runs, released by `releaseSleepInhibitor()`
/// once the agent has locked for a suspend, and taken again after resume.
public final class BusLockTriggers: Sendable {
    let addresses: LockTriggerAddresses
    let logger: Logger
    let onTrigger: @Sendable (LockTrigger) -> Void
    let onActive: @Sendable ([String]) -> Void
    let shared = Locked(Shared())
    let finished = DispatchSemaphore(value: 0)

    struct Shared {
        var started = false
        var stopping = false
        var releaseRequested = false
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
    }

    /// Prepares the triggers; `start()` connects. `onActive` hears the triggers in force (empty
    /// when no bus could be reached) each time they change.
    public init(
        addresses: LockTriggerAddresses, logger: Logger, onTrigger: @escaping @Sendable (LockTrigger) -> Void,
        onActive: @escaping @Sendable ([String]) -> Void
    ) {
        self.addresses = addresses
        self.logger = logger
        self.onTrigger = onTrigger
        self.onActive = onActive
    }

    /// Starts the bus thread, which connects to both buses and watches them.
    public func start() throws {
        var fds: [Int32] = [-1, -1]
        let result = cordon_pipe_cloexec(&fds)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: -result) ?? .EIO) }
        shared.withLock { state in
            state.wakeRead = fds[0]
            state.wakeWrite = fds[1]
            state.started = true
        }
        let wakeFD = fds[0]
        let thread = Thread { [self] in
            let runner = BusRunner(owner: self, wakeFD: wakeFD)
            runner.run()
            finished.signal()
        }
        thread.name = "cordond-bus"
        thread.start()
    }

    /// Lets the pending sleep go on: closes the `delay` inhibitor (after the agent has locked).
    public func releaseSleepInhibitor() {
        shared.withLock { $0.releaseRequested = true }
        wake()
    }

    /// Stops the bus thread, closes both connections and waits for the thread to end.
    public func stop() {
        let started = shared.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        guard started else { return }
        wake()
        finished.wait()
        shared.withLock { state in
            close(state.wakeRead)
            close(state.wakeWrite)
            state.started = false
        }
    }

    private func wake() {
        let fd = shared.withLock { $0.wakeWrite }
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }
}
