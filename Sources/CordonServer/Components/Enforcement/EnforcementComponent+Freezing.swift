import CordonLifecycle
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore

/// What enforcement knows of an app it froze for a missed deadline.
struct FreezeRecord {
    let method: FreezeMethod
    /// Times it was found resumed and frozen again.
    var resumesUndone = 0
    /// `cgroup.events` said `frozen 1` (logged once).
    var confirmed = false
    /// Its process was moved out of its cgroup: it is stopped with signals as well.
    var escaped = false
    /// Frozen by its supervisor (`cordon run`), held by the agent until the key returns; the app
    /// itself complied.
    var heldForSupervisor = false
}

/// Freezing that holds (docs/ARCHITECTURE.md, "Freezing"): an app frozen for a missed deadline
/// is checked on the event loop every `freezeCheckInterval` while any is frozen, and on every
/// `ListApps`; one found resumed — its `cgroup.freeze` written back to 0, its process moved out of
/// its cgroup, or (frozen with signals) a process of its group running after a SIGCONT from
/// elsewhere — is frozen again, and that is audited (`ack.refreeze`) and counted in `ListApps`.
extension EnforcementComponent {
    /// How often frozen apps are checked while any is frozen (no timer runs while none is).
    static let freezeCheckInterval: TimeAmount = .seconds(1)

    /// Freezes the app on `connection` and starts watching it; returns an error description, or nil.
    func freezeApp(_ connection: ConnectionID) -> String? {
        if let failure = act(connection, { try $0.freeze() }) { return failure }
        if let target = targets[connection] { frozen[connection] = FreezeRecord(method: target.freezeMethod) }
        scheduleFreezeCheck()
        return nil
    }

    /// Takes over the freeze of an app whose supervisor (`cordon run`) froze it and acknowledged a
    /// revocation as halted: the agent freezes it too (a no-op on a frozen cgroup or a stopped
    /// group) and holds it like a freeze of its own — checked, frozen again when resumed, thawed
    /// when the key returns — so a supervisor killed or a `cgroup.freeze` written back to 0
    /// does not let the program run on. Audited as `ack.hold`.
    func holdSupervisorFreeze(_ app: AppRegistration) {
        guard app.enforcement == nil, targets[app.connection] != nil else { return }
        let failure = freezeApp(app.connection)
        frozen[app.connection]?.heldForSupervisor = true
        let what = targets[app.connection]?.frozenWhat ?? "signals"
        logger.notice(
            "enforcement: the supervisor froze the app; the agent holds the freeze",
            metadata: ["appId": "\(app.appId)", "pid": "\(app.pid)", "error": "\(failure ?? "none")"])
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .enforcement, appId: app.appId, action: "ack.hold",
                outcome: failure == nil ? "hold" : "failed",
                reason: "its supervisor froze it and acknowledged; held through \(what); pid \(app.pid)")
        ])
    }

    /// The key is back: releases every freeze held for a supervisor (which thaws its program on
    /// the same event).
    func releaseSupervisorHolds() {
        for (id, record) in frozen where record.heldForSupervisor {
            let failure = thawApp(id)
            guard let app = host.registry.registrations[id] else { continue }
            host.writeAudit([
                AuditEntry(
                    time: host.clock(), category: .enforcement, appId: app.appId, action: "ack.release",
                    outcome: failure == nil ? "thaw" : "failed", reason: "the key is available again; pid \(app.pid)")
            ])
        }
    }

    /// Thaws the app on `connection` (its cgroup; SIGCONT when it was stopped with signals).
    @discardableResult
    func thawApp(_ connection: ConnectionID) -> String? {
        let record = frozen.removeValue(forKey: connection)
        return act(connection) { try $0.thaw(signalled: record?.escaped ?? false) }
    }

    /// The registered apps as `ListApps` reports them: what the agent reads of each process now,
    /// after checking that every frozen app still is (and freezing again one that is not).
    func appInfos() -> [AppInfo] {
        verifyFrozenApps()
        return host.registry.all.map { app in
            var info = app.info
            guard let target = targets[app.connection] else { return info }
            info.processState = target.state
            info.cgroup = target.cgroup?.path
            if let record = frozen[app.connection], app.enforcement == .freeze || record.heldForSupervisor {
                info.freezeMethod = record.escaped ? .signals : record.method
                info.resumesUndone = record.resumesUndone
            }
            return info
        }
    }

    /// Checks again, `freezeCheckInterval` from now, unless a check is due already or nothing is frozen.
    func scheduleFreezeCheck() {
        guard freezeCheck == nil, !frozen.isEmpty, !host.isShuttingDown else { return }
        freezeCheck = loop.assumeIsolated().scheduleTask(in: Self.freezeCheckInterval) { [self] in
            freezeCheck = nil
            verifyFrozenApps()
            scheduleFreezeCheck()
        }
    }

    /// Checks every app frozen for a missed deadline; forgets those no longer frozen.
    func verifyFrozenApps() {
        for id in frozen.keys.sorted() {
            guard let app = host.registry.registrations[id],
                app.enforcement == .freeze || frozen[id]?.heldForSupervisor == true
            else {
                frozen.removeValue(forKey: id)
                continue
            }
            verifyFrozen(app)
        }
    }

    /// Freezes `app` again if it was resumed, and audits it.
    private func verifyFrozen(_ app: AppRegistration) {
        guard var record = frozen[app.connection], let target = targets[app.connection], target.pidfd.isAlive else {
            return
        }
        var resumes: [String] = []
        var failures: [String] = []
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch { failures.append("\(error)") }
        }
        if let cgroup = target.cgroup {
            if cgroup.freezeRequested == false {
                resumes.append("the cgroup.freeze of \(cgroup) was set to 0 by another process")
                attempt { try cgroup.setFrozen(true) }
            } else if !record.confirmed, cgroup.events()?.frozen == true {
                record.confirmed = true
                logger.info(
                    "enforcement: the freeze took effect (cgroup.events: frozen 1)",
                    metadata: ["appId": "\(app.appId)", "cgroup": "\(cgroup)"])
            }
            if !record.escaped, !target.isInItsCgroup, target.pidfd.isAlive {
                record.escaped = true
                resumes.append("pid \(target.pid) was moved out of its cgroup \(cgroup)")
                attempt { try target.signal(SIGSTOP) }
            }
        }
        if target.cgroup == nil || record.escaped {
            let running = target.signalled.filter { ProcessInfoReader.runState(of: $0) == .running }
            if !running.isEmpty {
                let pids = running.map(String.init).joined(separator: ", ")
                resumes.append("pid \(pids) ran again (a SIGCONT from another process)")
                attempt { try target.signal(SIGSTOP) }
            }
        }
        if !resumes.isEmpty { record.resumesUndone += 1 }
        frozen[app.connection] = record
        guard !resumes.isEmpty else { return }
        let what = record.escaped ? "\(target.frozenWhat) and signals" : target.frozenWhat
        let reason = "resumed while frozen: \(resumes.joined(separator: "; ")); frozen again through \(what)"
        logger.warning(
            "enforcement: a frozen app was resumed; freezing it again",
            metadata: [
                "appId": "\(app.appId)", "pid": "\(app.pid)", "reason": "\(reason)",
                "error": "\(failures.isEmpty ? "none" : failures.joined(separator: "; "))",
            ])
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .enforcement, appId: app.appId, action: "ack.refreeze",
                outcome: failures.isEmpty ? "refreeze" : "failed",
                reason: "\(reason); pid \(app.pid), resume \(record.resumesUndone)")
        ])
    }
}
