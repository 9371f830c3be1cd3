import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore

/// Enforcement: what happens to an app that misses its acknowledgement deadline (the policy's
/// `lock.onAckTimeout`: freeze, terminate, disconnect or report), thawing when the key returns,
/// and never leaving a program registered on its behalf frozen or orphaned. Every step is
/// audited and announced as an `AppEnforced` event. An app with a cgroup of its own is frozen
/// and killed through it; otherwise signals go through its pidfd, so a recycled PID is never
/// signalled. A frozen app found resumed is frozen again (`EnforcementComponent+Freezing.swift`;
/// docs/ARCHITECTURE.md, "Freezing").
final class EnforcementComponent: AgentComponent {

    /// How long `terminate` waits after SIGTERM before SIGKILL.
    static let terminateGraceSeconds: Int64 = 3

    unowned let host: any ComponentHost
    /// The process each registered app's enforcement acts on.
    var targets: [ConnectionID: EnforcementTarget] = [:]
    /// The apps this component froze, and what it saw of them since.
    var frozen: [ConnectionID: FreezeRecord] = [:]
    /// The next check that frozen apps stay frozen, while any is.
    var freezeCheck: Scheduled<Void>?
    /// The agent's own cgroup: never frozen on an app's behalf.
    let agentCgroup = Cgroup.of(pid: getpid())

    init(host: any ComponentHost) {
        self.host = host
    }

    var loop: any EventLoop { host.loop }
    var logger: Logger { host.logger }

    /// Acts on `process` for the app `appId` registered on connection `id` by process `registrar`,
    /// through the app's own cgroup when the rule in `AppCgroup` grants one.
    func track(_ id: ConnectionID, appId: String, process: Pidfd, pid: Int32, onBehalf: Bool, registrar: Int32) {
        let verdict = AppCgroup.verdict(
            pid: pid, pidfd: process, onBehalf: onBehalf, registrar: registrar, agent: agentCgroup)
        var metadata: Logger.Metadata = ["appId": "\(appId)", "pid": "\(pid)"]
        switch verdict {
        case .own(let cgroup):
            metadata["cgroup"] = "\(cgroup)"
            logger.info("enforcement: the app is frozen and killed through its own cgroup", metadata: metadata)
            targets[id] = EnforcementTarget(pidfd: process, pid: pid, onBehalf: onBehalf, cgroup: cgroup)
        case .none(let reason):
            metadata["reason"] = "\(reason)"
            // Only cordon run gives its apps cgroups: an SDK app is not worth a notice.
            logger.log(
                level: onBehalf ? .notice : .debug, "enforcement: the app is frozen with signals", metadata: metadata)
            targets[id] = EnforcementTarget(pidfd: process, pid: pid, onBehalf: onBehalf)
        }
    }

    /// A registered app's connection is closing (its registration is still in the registry).
    func connectionClosed(_ id: ConnectionID) {
        guard let app = host.registry.registrations[id] else {
            targets.removeValue(forKey: id)
            frozen.removeValue(forKey: id)
            return
        }
        registeredAppClosed(app)
    }

    func shutdown() {
        freezeCheck?.cancel()
        freezeCheck = nil
    }

    /// Applies the policy's `lock.onAckTimeout` to an app that missed its acknowledgement
    /// deadline (or closed its connection while one was pending).
    func enforce(_ app: AppRegistration, why: String) {
        let setting = host.policy.policy.forApp(app.appId)[PolicyKeys.Lock.onAckTimeout]
        let action = EnforcementAction(setting.value)
        var metadata: Logger.Metadata = [
            "appId": "\(app.appId)", "pid": "\(app.pid)", "seq": "\(app.pendingSeq ?? 0)",
            "action": "\(action.rawValue)", "reason": "\(why)",
        ]
        var outcome = action.rawValue
        var detail = ""
        switch action {
        case .freeze:
            if let failure = freezeApp(app.connection) {
                outcome = "failed"
                metadata["error"] = "\(failure)"
            } else {
                host.recordEnforcement(app.connection, .freeze)
            }
            if let target = targets[app.connection] { detail = "; frozen through \(target.frozenWhat)" }
        case .terminate:
            if let failure = terminateApp(app.connection) {
                outcome = "failed"
                metadata["error"] = "\(failure)"
            } else {
                host.recordEnforcement(app.connection, .terminate)
            }
        case .disconnect:
            for id in [app.connection, app.subscriber].compactMap({ $0 }) {
                host.closeConnection(id)
            }
            host.recordEnforcement(app.connection, .disconnect)
        case .report, .thaw:
            host.recordEnforcement(app.connection, .report)
        }
        logger.warning("enforcement: app did not acknowledge the revocation", metadata: metadata)
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .enforcement, appId: app.appId, action: "ack.\(action.rawValue)",
                outcome: outcome, reason: "\(why); pid \(app.pid), seq \(app.pendingSeq ?? 0)\(detail)",
                rules: setting.rules.map(\.description))
        ])
        announce(app, action)
    }

    /// Broadcasts `AppEnforced` once the current machine step is done, so its seq never
    /// overtakes events that step already numbered.
    func announce(_ app: AppRegistration, _ action: EnforcementAction) {
        loop.assumeIsolated().execute { [host] in
            host.run(.appEnforced(appId: app.appId, pid: app.pid, action: action, now: host.clock()))
        }
    }

    /// Thaws apps frozen for a missed deadline, after the key's return was queued to them.
    func thaw(_ apps: [AppRegistration]) {
        for app in apps {
            let failure = thawApp(app.connection)
            logger.notice(
                "enforcement: key available again, app thawed",
                metadata: ["appId": "\(app.appId)", "pid": "\(app.pid)", "error": "\(failure ?? "none")"])
            host.writeAudit([
                AuditEntry(
                    time: host.clock(), category: .enforcement, appId: app.appId, action: "ack.thaw",
                    outcome: failure == nil ? "thaw" : "failed", reason: "the key is available again; pid \(app.pid)")
            ])
            announce(app, .thaw)
        }
    }

    /// Runs `body` on the app's target; returns an error description, or nil.
    @discardableResult
    func act(_ connection: ConnectionID, _ body: (EnforcementTarget) throws -> Void) -> String? {
        guard let target = targets[connection] else { return "\(EnforcementFailure.noHandle)" }
        guard target.pidfd.isAlive else { return "\(EnforcementFailure.exited)" }
        do {
            try body(target)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Thaw (a frozen program cannot act on SIGTERM) and SIGTERM now; after the grace, SIGKILL
    /// to whatever is left (`cgroup.kill`: its whole cgroup).
    private func terminateApp(_ connection: ConnectionID) -> String? {
        if let failure = act(connection, { try $0.signal(SIGTERM) }) { return failure }
        thawApp(connection)
        if let target = targets[connection] { killAfterGrace(target) }
        return nil
    }

    /// SIGKILL after `terminateGraceSeconds` unless the app is gone by then: its whole cgroup
    /// (`cgroup.kill`), else its group or process; then `then`.
    private func killAfterGrace(_ target: EnforcementTarget, then: (@Sendable () -> Void)? = nil) {
        loop.scheduleTask(in: .seconds(Self.terminateGraceSeconds)) { [logger] in
            defer { then?() }
            if let cgroup = target.cgroup, cgroup.events()?.populated == true {
                logger.warning(
                    "enforcement: app survived SIGTERM; killing its cgroup",
                    metadata: ["pid": "\(target.pid)", "cgroup": "\(cgroup)"])
                try? cgroup.kill()
            }
            guard target.pidfd.isAlive else { return }
            logger.warning("enforcement: app survived SIGTERM; sending SIGKILL", metadata: ["pid": "\(target.pid)"])
            try? target.signal(SIGKILL)
        }
    }

    /// A registered app's connection closed: a pending revocation counts as not acknowledged,
    /// and a program registered on its behalf (`cordon run`) is never left frozen or orphaned;
    /// its cgroup, which its supervisor can no longer remove, is removed once empty.
    private func registeredAppClosed(_ app: AppRegistration) {
        defer {
            targets.removeValue(forKey: app.connection)
            frozen.removeValue(forKey: app.connection)
        }
        // A shutdown closes every connection right after revoking: nobody had time to answer,
        // and nobody would be left to thaw them. Apps hear EncryptionKeyUnavailable and halt.
        guard !host.isShuttingDown, let target = targets[app.connection] else { return }
        if app.managed, app.pendingSeq != nil, !app.overdue {
            enforce(app, why: "disconnected without acknowledging")
        }
        guard target.onBehalf, target.pidfd.isAlive || target.cgroup?.events()?.populated == true else { return }
        logger.warning(
            "the supervisor of a wrapped program went away: thawing and terminating it",
            metadata: ["appId": "\(app.appId)", "pid": "\(app.pid)"])
        // Its supervisor may have frozen it too: thaw it so SIGTERM can be acted on.
        act(app.connection) { try $0.thaw(signalled: true) }
        act(app.connection) { try $0.signal(SIGTERM) }
        let loop = self.loop
        let remove = target.cgroup.map { cgroup in { @Sendable in Self.removeWhenEmpty(cgroup, loop: loop) } }
        killAfterGrace(target, then: remove)
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .enforcement, appId: app.appId, action: "supervisor.lost",
                outcome: "terminate", reason: "the process that registered pid \(app.pid) disconnected")
        ])
    }

    /// Removes `cgroup` once the processes killed in it are gone (a few tries, 100 ms apart).
    private static func removeWhenEmpty(_ cgroup: Cgroup, loop: any EventLoop, tries: Int = 50) {
        guard cgroup.exists else { return }
        if cgroup.events()?.populated == false, (try? cgroup.remove()) != nil { return }
        guard tries > 1 else { return }
        loop.scheduleTask(in: .milliseconds(100)) { removeWhenEmpty(cgroup, loop: loop, tries: tries - 1) }
    }
}

extension EnforcementAction {
    /// What the policy's `lock.onAckTimeout` has enforcement do.
    init(_ timeout: AckTimeoutAction) {
        switch timeout {
        case .freeze: self = .freeze
        case .terminate: self = .terminate
        case .disconnect: self = .disconnect
        case .report: self = .report
        }
    }
}
