import CordonFleet
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import NIOCore

/// The agent's side of the fleet (docs/ARCHITECTURE.md, "Fleet commands in the agent"): watches
/// cordon-fleetd's directory, executes each verified command once per container in counter order
/// (`FleetComponent+Commands.swift`), and applies `conditions.policyStale`
/// (`FleetComponent+Staleness.swift`).
///
/// The ledger (`fleetCommand` in the store) makes "once" hold across a kill: `executing` is
/// committed before acting, each action is idempotent, `done` follows; a row left `executing` is
/// performed again at the next pass. Passes run one at a time; a change during one queues another.
final class FleetComponent: AgentComponent {
    /// What the fleet needs of the agent.
    typealias Host = LifecycleDriver & AuditSink & AppDataWiper & PolicyProvider

    unowned let host: any Host
    /// The directory; nil when the agent runs without a fleet (`AgentConfiguration.fleetDirectory`).
    let directory: FleetDirectory?
    private var watcher: DirectoryWatcher?
    /// A pass is under way; `again`: a change came during it.
    private var passing = false
    private var again = false
    private var scanScheduled = false
    /// Whether the last event's state had a container.
    var initialized: Bool
    /// The directory as last read.
    var reading = FleetDirectory.Reading()
    /// The last command recorded (executed or refused), for the status.
    var lastRecord: FleetCommandRecord?
    /// Replays already audited while this agent runs (a counter and digest the ledger cannot hold).
    var auditedReplays: Set<[UInt8]> = []
    /// `conditions.policyStale`: whether the policy was stale at the last evaluation, and the timer
    /// at `staleAfter`.
    var stale = false
    var staleTimer: Scheduled<Void>?
    /// The last audited staleness action (audited once per stale period and action).
    var auditedStale: PolicyStaleAction?

    init(host: any Host) {
        self.host = host
        directory = host.configuration.fleetDirectory.map {
            FleetDirectory(path: $0, opened: host.configuration.openedFleetDirectory)
        }
        initialized = host.lifecycleState != .uninitialized
    }

    /// Starts watching the directory and makes the first pass (from `FleetWatcherService`, once
    /// the agent serves).
    func start() {
        guard let directory, watcher == nil, !host.isShuttingDown else { return }
        let loop = host.loop
        let component = NIOLoopBound(self, eventLoop: loop)
        do {
            watcher = try DirectoryWatcher(directories: directory.watched) {
                loop.execute { component.value.scheduleScan() }
            }
        } catch {
            host.logger.error("cannot watch the fleet directory: \(error)", metadata: ["path": "\(directory.path)"])
        }
        scan()
    }

    func shutdown() {
        watcher?.stop()
        watcher = nil
        staleTimer?.cancel()
        staleTimer = nil
    }

    /// A policy change or an unlock while stale applies `conditions.policyStale` again.
    func observe(_ event: CordonEvent) {
        guard directory != nil else { return }
        if event.kind == .policyDidChange || event.state == .unlocked { evaluateStaleness(why: "\(event.kind)") }
    }

    /// After every step of the lifecycle machine (`Agent.run`; no event says a container was made):
    /// a container just made records its floor now, before any later pass reads the ledger (the
    /// store pool is serial); a wiped one executes nothing more.
    func lifecycleStepped() {
        let now = host.lifecycleState != .uninitialized
        guard now != initialized else { return }
        initialized = now
        guard now, let directory else { return }
        let database = host.database
        let clock = host.clock()
        let logger = host.logger
        host.storePool.runIfActive(eventLoop: host.loop) { () throws -> Int in
            let highest = directory.read().highestCounter
            try database.raiseFleetFloor(to: highest, now: clock)
            return highest
        }.whenComplete { result in
            switch result {
            case .success(let floor):
                logger.notice(
                    "fleet: the new container records its floor; commands at or below it are never executed by it",
                    metadata: ["floor": "\(floor)"])
            case .failure(let error):
                logger.error("fleet: the new container's floor could not be recorded: \(error)")
            }
        }
    }

    /// Makes a pass shortly, coalescing a burst of file events.
    func scheduleScan() {
        guard !scanScheduled, !host.isShuttingDown else { return }
        scanScheduled = true
        host.loop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { [self] in
            scanScheduled = false
            scan()
        }
    }

    /// One pass: the directory and the ledger read off the loop (the floor raised first when the
    /// container was just made), the plan made, then each step performed in order.
    func scan() {
        guard let directory, !host.isShuttingDown else { return }
        guard !passing else {
            again = true
            return
        }
        passing = true
        let execute = initialized
        let database = host.database
        host.storePool.runIfActive(eventLoop: host.loop) {
            () throws -> (FleetDirectory.Reading, [Int: FleetCommandRecord], Int?) in
            (directory.read(), try database.fleetCommands(), try database.fleetFloor())
        }.assumeIsolated().flatMap { [self] read -> EventLoopFuture<Void> in
            let (reading, ledger, floor) = read
            self.reading = reading
            if lastRecord == nil {
                lastRecord = ledger.values.filter { $0.state != .executing }.max { $0.counter < $1.counter }
            }
            if let problem = reading.problem { host.logger.warning("fleet: \(problem)") }
            evaluateStaleness(why: "fleet directory read")
            guard execute && initialized else { return host.loop.makeSucceededVoidFuture() }
            let plan = FleetPlan.steps(
                entries: reading.entries, ledger: ledger, floor: floor, device: reading.status?.device)
            if let waiting = plan.waiting { host.logger.info("fleet: commands wait: \(waiting)") }
            return perform(plan.steps[...])
        }.whenComplete { [self] result in
            if case .failure(let error) = result { host.logger.error("fleet: the pass failed: \(error)") }
            passing = false
            if again {
                again = false
                scheduleScan()
            }
        }
    }

    /// No pass is under way or waiting.
    var isIdle: Bool { !passing && !again && !scanScheduled }

    /// The fleet row of `GetStatus`, while the directory exists.
    func status(now: Double) -> FleetStatus? {
        guard directory != nil, reading.exists else { return nil }
        let status = reading.status
        return FleetStatus(
            device: status?.device, verifiedAt: status?.verifiedAt?.timeIntervalSince1970,
            staleAfter: status?.staleAfter?.timeIntervalSince1970,
            stale: Self.isStale(reading, now: now) ?? false,
            policyStale: host.policy.policy[PolicyKeys.Conditions.policyStale].value.rawValue,
            lastCommand: lastRecord.map { "#\($0.counter) \($0.kind) \($0.state.rawValue)" },
            lastCommandAt: lastRecord?.at, problem: reading.problem ?? reading.statusProblem)
    }
}
