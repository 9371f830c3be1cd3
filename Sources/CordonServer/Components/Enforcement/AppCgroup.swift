import CordonSystem
import Foundation

/// The rule that decides whether the agent freezes (and kills) an app through its cgroup
/// (docs/ARCHITECTURE.md, "Freezing"). The cgroup is the one the kernel reports for the
/// registered process (`/proc/PID/cgroup`, read while its pidfd shows it is still that process),
/// never one a client names. It is the app's own only when:
///
/// 1. the app was registered on its behalf by its parent (`cordon run`, which creates it one);
/// 2. it is not the root of the hierarchy, and holds neither the agent nor the process that
///    registered the app (freezing it would freeze them);
/// 3. its `cgroup.freeze` and `cgroup.kill` are writable by the agent;
/// 4. every process in it and below it is the app's process or started after it (its
///    children, `setsid` ones included): a process that was there before the app — a shell, a
///    session, another app — means the cgroup is shared, and it is not frozen on the app's
///    behalf.
///
/// Otherwise the app is frozen with signals (SIGSTOP to its process group), and the refusal says why.
enum AppCgroup {
    /// The app's own cgroup, or why it has none.
    enum Verdict: Equatable {
        case own(Cgroup)
        case none(String)
    }

    /// Applies the rule to the registered process `pid` (behind `pidfd`), registered by `registrar`.
    static func verdict(
        pid: Int32, pidfd: Pidfd, onBehalf: Bool, registrar: Int32, agent: Cgroup?
    ) -> Verdict {
        guard onBehalf else { return .none("it registered itself (only cordon run starts an app in a cgroup)") }
        guard let cgroup = Cgroup.of(pid: pid), pidfd.isAlive else {
            return .none("no cgroup2 hierarchy, or the process's cgroup cannot be read")
        }
        guard !cgroup.isRoot else { return .none("it is in the root cgroup") }
        if let agent, cgroup.contains(agent) {
            return .none("its cgroup \(cgroup) holds the agent")
        }
        if let registrar = Cgroup.of(pid: registrar), cgroup.contains(registrar) {
            return .none("its cgroup \(cgroup) holds the process that registered it")
        }
        guard cgroup.canFreezeAndKill else {
            return .none("the cgroup.freeze or cgroup.kill of \(cgroup) is not writable")
        }
        guard let started = ProcessInfoReader.startTime(of: pid) else {
            return .none("the process's start time cannot be read")
        }
        for other in cgroup.processes() where other != pid {
            // A process that exited since it was listed has no start time: it holds nothing.
            if let time = ProcessInfoReader.startTime(of: other), time < started {
                return .none("its cgroup \(cgroup) also holds pid \(other), which started before the app")
            }
        }
        // Every fact above was read while the process was the one registered.
        guard pidfd.isAlive else { return .none("the process has exited") }
        return .own(cgroup)
    }
}
