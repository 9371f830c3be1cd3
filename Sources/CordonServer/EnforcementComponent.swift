import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore

/// The process an app's enforcement acts on: its pidfd (so a recycled PID is never signalled)
/// and whether it was registered on its behalf by a parent (`cordon run`).
struct EnforcementTarget {
    let pidfd: Pidfd
    let pid: Int32
    let onBehalf: Bool

    /// Signals the process group when the process leads its own (and it is not the agent's),
    /// else the process alone; always through the pidfd.
    func signal(_ signal: Int32) throws {
        if let facts = ProcessInfoReader.parentAndGroup(of: pid), pidfd.isAlive, facts.pgrp == pid,
            facts.pgrp != getpgrp()
        {
            try pidfd.sendToGroup(signal: signal)
        } else {
            try pidfd.send(signal: signal)
        }
    }
}

/// Enforcement: what happens to an app that misses its acknowledgement deadline (the policy's
/// `lock.onAckTimeout`: freeze, terminate, disconnect or report), thawing when the key returns,
/// and never leaving a program registered on its behalf frozen or orphaned. Every step is
/// audited and announced as an `AppEnforced` event. Signals go through each app's pidfd, so a
/// recycled PID is never signalled.
final class EnforcementComponent: AgentComponent {
    let methods: [Method] = []

    /// How long `terminate` waits after SIGTERM before SIGKILL.
    static let terminateGraceSeconds: Int64 = 3

    private unowned let host: any ComponentHost
    /// The process each registered app's enforcement acts on.
    private var targets: [ConnectionID: EnforcementTarget] = [:]

    init(host: any ComponentHost) {
        self.host = host
    }

    private var loop: any EventLoop { host.loop }
    private var logger: Logger { host.logger }

    func serve(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        throw .methodNotFound(call.method.rawValue)
    }

    /// Acts on `target` for the app registered on connection `id`.
    func track(_ id: ConnectionID, target: EnforcementTarget) {
        targets[id] = target
    }

    /// A registered app's connection is closing (its registration is still in the registry).
    func connectionClosed(_ id: ConnectionID) {
        guard let app = host.registry.registrations[id] else {
            targets.removeValue(forKey: id)
            return
        }
        registeredAppClosed(app)
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
        switch action {
        case .freeze:
            if let detail = signalApp(app.connection, SIGSTOP) {
                outcome = "failed"
                metadata["error"] = "\(detail)"
            } else {
                host.recordEnforcement(app.connection, .freeze)
            }
        case .terminate:
            if let detail = terminateApp(app.connection) {
                outcome = "failed"
                metadata["error"] = "\(detail)"
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
                outcome: outcome, reason: "\(why); pid \(app.pid), seq \(app.pendingSeq ?? 0)",
                rules: setting.rules.map(\.description))
        ])
        announce(app, action)
    }

    /// Broadcasts `AppEnforced` once the current machine step is done, so its seq never
    /// overtakes events that step already numbered.
    private func announce(_ app: AppRegistration, _ action: EnforcementAction) {
        loop.assumeIsolated().execute { [host] in
            host.run(.appEnforced(appId: app.appId, pid: app.pid, action: action, now: host.clock()))
        }
    }

    /// Sends SIGCONT to apps frozen for a missed deadline, after the key's return was queued to them.
    func thaw(_ apps: [AppRegistration]) {
        for app in apps {
            let failure = signalApp(app.connection, SIGCONT)
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

    /// Signals the app's process group (or the process alone when it does not lead its own group,
    /// or shares the agent's) through its pidfd. Returns an error description, or nil.
    @discardableResult
    func signalApp(_ connection: ConnectionID, _ signal: Int32) -> String? {
        guard let target = targets[connection] else { return "no process handle for the app" }
        guard target.pidfd.isAlive else { return "the process has exited" }
        do {
            try target.signal(signal)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// SIGCONT and SIGTERM now, SIGKILL after the grace if the process is still there.
    private func terminateApp(_ connection: ConnectionID) -> String? {
        if let failure = signalApp(connection, SIGTERM) { return failure }
        signalApp(connection, SIGCONT)
        if let target = targets[connection] { killAfterGrace(target) }
        return nil
    }

    /// SIGKILL after `terminateGraceSeconds` unless the process is gone by then.
    private func killAfterGrace(_ target: EnforcementTarget) {
        loop.scheduleTask(in: .seconds(Self.terminateGraceSeconds)) { [logger] in
            guard target.pidfd.isAlive else { return }
            logger.warning("enforcement: app survived SIGTERM; sending SIGKILL", metadata: ["pid": "\(target.pid)"])
            try? target.signal(SIGKILL)
        }
    }

    /// A registered app's connection closed: a pending revocation counts as not acknowledged,
    /// and a program registered on its behalf (`cordon run`) is never left frozen or orphaned.
    private func registeredAppClosed(_ app: AppRegistration) {
        defer { targets.removeValue(forKey: app.connection) }
        // A shutdown closes every connection right after revoking: nobody had time to answer,
        // and nobody would be left to thaw them. Apps hear EncryptionKeyUnavailable and halt.
        guard !host.isShuttingDown, let target = targets[app.connection] else { return }
        if app.managed, app.pendingSeq != nil, !app.overdue {
            enforce(app, why: "disconnected without acknowledging")
        }
        guard target.onBehalf, target.pidfd.isAlive else { return }
        logger.warning(
            "the supervisor of a wrapped program went away: thawing and terminating it",
            metadata: ["appId": "\(app.appId)", "pid": "\(app.pid)"])
        signalApp(app.connection, SIGCONT)
        signalApp(app.connection, SIGTERM)
        killAfterGrace(target)
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .enforcement, appId: app.appId, action: "supervisor.lost",
                outcome: "terminate", reason: "the process that registered pid \(app.pid) disconnected")
        ])
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
