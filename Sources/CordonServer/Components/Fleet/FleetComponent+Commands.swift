import CordonFleet
import CordonLifecycle
import CordonProtocol
import CordonStore
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Executing fleet commands (docs/ARCHITECTURE.md, "Fleet commands in the agent"): `executing`
/// committed, the action (idempotent), every store write before it finished, `done` committed,
/// then the audit record.
extension FleetComponent {
    /// Performs `steps` one after the other; stops when the container is gone (the floor recorded
    /// when the next one is made covers what is left).
    func perform(_ steps: ArraySlice<FleetPlan.Step>) -> EventLoopFuture<Void> {
        guard let step = steps.first, !host.isShuttingDown else { return host.loop.makeSucceededVoidFuture() }
        guard initialized else {
            host.logger.notice("fleet: the container is gone; the remaining commands are not executed")
            return host.loop.makeSucceededVoidFuture()
        }
        let done: EventLoopFuture<Void>
        switch step {
        case .execute(let command, let file, let again):
            done = execute(
                FleetCommandRecord(
                    counter: command.counter, digest: command.digest, kind: command.kind.rawValue, app: command.app,
                    state: .executing, at: host.clock()), reason: command.reason, file: file, again: again)
        case .redo(let record):
            done = execute(record, reason: nil, file: nil, again: true)
        case .refuse(let command, let refusal, let detail, let file, let record):
            done = refuse(command, refusal, detail: detail, file: file, record: record)
        }
        return done.assumeIsolated().flatMapError { [self] error in
            host.logger.error("fleet: a command failed; it is performed again at the next pass: \(error)")
            return host.loop.makeSucceededVoidFuture()
        }.flatMap { [self] in perform(steps.dropFirst()) }.nonisolated()
    }

    /// `executing` committed, the action, `done` committed, audited.
    private func execute(_ record: FleetCommandRecord, reason: String?, file: String?, again: Bool)
        -> EventLoopFuture<Void>
    {
        let database = host.database
        let pool = host.storePool
        let loop = host.loop
        var executing = record
        executing.state = .executing
        executing.at = host.clock()
        let started = executing
        return pool.runIfActive(eventLoop: loop) { try database.recordFleetCommand(started) }
            .assumeIsolated().flatMap { [self] () -> EventLoopFuture<Void> in
                crashPoint(.executing, record, again: again)
                host.logger.notice(
                    "fleet: executing a command",
                    metadata: ["counter": "\(record.counter)", "kind": "\(record.kind)", "app": "\(record.app ?? "-")"])
                return act(record)
            }.flatMap { [host] () -> EventLoopFuture<Void> in
                // Every store write the action queued (the keystore's erase, its audit records) is
                // stored before this goes on.
                host.auditStored().flatMap { pool.runIfActive(eventLoop: loop) {} }
            }.flatMap { [self] () -> EventLoopFuture<Void> in
                crashPoint(.acted, record, again: again)
                var finished = record
                finished.state = .done
                finished.at = host.clock()
                let done = finished
                return pool.runIfActive(eventLoop: loop) { try database.recordFleetCommand(done) }
                    .assumeIsolated().map { [self] in
                        lastRecord = done
                        host.configuration.metrics.fleetCommand(executed: true)
                        host.logger.notice(
                            "fleet: command executed",
                            metadata: ["counter": "\(record.counter)", "kind": "\(record.kind)"])
                        host.writeAudit([
                            entry(
                                record, outcome: "executed", why: reason.map { "the admin's words: \($0)" }, file: file)
                        ])
                    }.nonisolated()
            }.nonisolated()
    }

    /// The action itself, idempotent: lock (whatever the state), the selective wipe of the app, the
    /// full wipe (nothing when there is no container), nothing for `refresh` (fleetd's business).
    private func act(_ record: FleetCommandRecord) -> EventLoopFuture<Void> {
        let now = host.clock()
        switch FleetCommand.Kind(rawValue: record.kind) {
        case .lock:
            if host.lifecycleState != .uninitialized { host.run(.lock(reason: .policy, now: now)) }
        case .wipeApp:
            guard let app = record.app else { break }
            return host.wipeAppData(app, reason: "fleet command #\(record.counter): the admin wiped the app")
        case .wipe:
            host.run(.forceWipe(reason: .policy, now: now))
        case .refresh, nil:
            break
        }
        return host.loop.makeSucceededVoidFuture()
    }

    /// Refuses a command: recorded `refused` when its counter is free, audited once, logged.
    private func refuse(
        _ command: FleetCommand, _ refusal: FleetCommandCheck.Refusal, detail: String, file: String, record: Bool
    ) -> EventLoopFuture<Void> {
        let refused = FleetCommandRecord(
            counter: command.counter, digest: command.digest, kind: command.kind.rawValue, app: command.app,
            state: .refused, at: host.clock())
        if !record {
            let key = refused.digest + Array(String(refused.counter).utf8)
            guard !auditedReplays.contains(key) else { return host.loop.makeSucceededVoidFuture() }
            auditedReplays.insert(key)
        }
        host.configuration.metrics.fleetCommand(executed: false)
        host.logger.warning(
            "fleet: command refused",
            metadata: ["counter": "\(command.counter)", "refusal": "\(refusal.rawValue)", "detail": "\(detail)"])
        let audit = entry(refused, outcome: "refused", why: "\(refusal.rawValue): \(detail)", file: file)
        guard record else { return host.writeAudit([audit]) }
        let database = host.database
        return host.storePool.runIfActive(eventLoop: host.loop) { try database.recordFleetCommand(refused) }
            .assumeIsolated().flatMap { [self] in
                lastRecord = refused
                return host.writeAudit([audit])
            }.nonisolated()
    }

    /// The `fleet.command` audit record.
    private func entry(_ record: FleetCommandRecord, outcome: String, why: String?, file: String?) -> AuditEntry {
        var reason = "fleet command #\(record.counter) \(record.kind)"
        if let why { reason += ": \(why)" }
        let rules = file.map { ["\(directory?.path ?? "")/\(FleetHandoff.commandsDirectory)/\($0)"] } ?? []
        return AuditEntry(
            time: host.clock(), category: "fleet", appId: record.app, action: "fleet.command", outcome: outcome,
            reason: reason, rules: rules)
    }

    /// Test mode only (`CORDON_TEST_FLEET_CRASH`): exits as a kill -9 would at `point` of the
    /// first execution of the command it names (never of a command performed again).
    private func crashPoint(_ point: FleetCrashPoint.Point, _ record: FleetCommandRecord, again: Bool) {
        guard host.configuration.testMode, !again, let crash = host.configuration.fleetCrashPoint,
            crash.point == point, crash.counter == record.counter
        else { return }
        host.logger.critical("fleet: CORDON_TEST_FLEET_CRASH=\(crash): exiting as killed")
        _exit(137)
    }
}

/// The test-mode crash hook (`CORDON_TEST_FLEET_CRASH=POINT:COUNTER`): cordond exits (status 137,
/// as a kill would) right after `executing` of command COUNTER is committed, or right after its
/// action, before `done`; only the first time, not when it is performed again after the restart.
public struct FleetCrashPoint: Sendable, Equatable, CustomStringConvertible {
    /// Where in a command's execution.
    public enum Point: String, Sendable, CaseIterable {
        case executing
        case acted
    }

    public var point: Point
    public var counter: Int

    /// `executing:3`, `acted:1`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let point = Point(rawValue: String(parts[0])), let counter = Int(parts[1]) else {
            return nil
        }
        self.point = point
        self.counter = counter
    }

    public var description: String { "\(point.rawValue):\(counter)" }
}
