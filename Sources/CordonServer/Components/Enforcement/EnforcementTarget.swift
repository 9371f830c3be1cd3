import CordonProtocol
import CordonSystem
import Foundation

/// The process an app's enforcement acts on: its pidfd (so a recycled PID is never signalled),
/// whether it was registered on its behalf by a parent (`cordon run`), and its own cgroup when
/// the rule in `AppCgroup` grants it one (docs/ARCHITECTURE.md, "Freezing").
struct EnforcementTarget {
    let pidfd: Pidfd
    let pid: Int32
    let onBehalf: Bool
    /// Frozen (`cgroup.freeze`) and killed (`cgroup.kill`) as a whole; nil: signals.
    let cgroup: Cgroup?

    init(pidfd: Pidfd, pid: Int32, onBehalf: Bool, cgroup: Cgroup? = nil) {
        self.pidfd = pidfd
        self.pid = pid
        self.onBehalf = onBehalf
        self.cgroup = cgroup
    }

    /// How `freeze()` freezes the app.
    var freezeMethod: FreezeMethod { cgroup == nil ? .signals : .cgroup }

    /// Whether signals go to the process group: the process leads its own (not the agent's).
    var signalsGroup: Bool {
        guard let facts = ProcessInfoReader.parentAndGroup(of: pid), pidfd.isAlive else { return false }
        return facts.pgrp == pid && facts.pgrp != getpgrp()
    }

    /// What the signals reach: the process group's members, or the process alone.
    var signalled: [Int32] { signalsGroup ? ProcessInfoReader.members(ofGroup: pid) : [pid] }

    /// A description of what is frozen, for logs and audit records.
    var frozenWhat: String {
        if let cgroup { return "cgroup \(cgroup)" }
        return signalsGroup ? "process group \(pid)" : "pid \(pid)"
    }

    /// Signals the process group when the process leads its own (and it is not the agent's),
    /// else the process alone; always through the pidfd.
    func signal(_ signal: Int32) throws {
        if signalsGroup {
            try pidfd.sendToGroup(signal: signal)
        } else {
            try pidfd.send(signal: signal)
        }
    }

    /// Freezes the app: `cgroup.freeze` 1 (everything in the cgroup, `setsid` escapes too), or
    /// SIGSTOP to its group.
    func freeze() throws {
        guard pidfd.isAlive else { throw EnforcementFailure.exited }
        if let cgroup { try cgroup.setFrozen(true) } else { try signal(SIGSTOP) }
    }

    /// Thaws the app: `cgroup.freeze` 0, and SIGCONT when it was (also) stopped with signals.
    func thaw(signalled: Bool) throws {
        guard pidfd.isAlive else { throw EnforcementFailure.exited }
        if let cgroup { try cgroup.setFrozen(false) }
        if cgroup == nil || signalled { try signal(SIGCONT) }
    }

    /// Whether the registered process is still in its cgroup (another process of the user may
    /// move it out: the delegated hierarchy is writable by the user).
    var isInItsCgroup: Bool {
        guard let cgroup else { return false }
        let current = Cgroup.of(pid: pid)
        return pidfd.isAlive && current == cgroup
    }

    /// The process as the agent reads it now: `cgroup.events` for a cgroup, else `/proc`.
    var state: ProcessState {
        guard pidfd.isAlive else { return .exited }
        if let cgroup, let events = cgroup.events() {
            if events.frozen { return .frozen }
            if cgroup.freezeRequested == true { return .freezing }
        }
        switch ProcessInfoReader.runState(of: pid) {
        case .running: return .running
        case .stopped: return .stopped
        case .stopping: return .freezing
        case .gone: return .exited
        }
    }
}

/// Why enforcement could not act.
enum EnforcementFailure: Error, CustomStringConvertible {
    case exited
    case noHandle

    var description: String {
        switch self {
        case .exited: return "the process has exited"
        case .noHandle: return "no process handle for the app"
        }
    }
}
