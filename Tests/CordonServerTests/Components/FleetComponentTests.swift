import CordonFleet
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `FleetComponent` against a fake host (docs/ARCHITECTURE.md, "Fleet commands in the agent"): a
/// real fleet directory in a temporary directory (test mode: no owner checks), the real ledger in
/// the host's store, the clock the host's.
@Suite struct FleetComponentTests {
    typealias Fixture = ComponentFixture<FleetComponent>
    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)
    static let device = "device-1"
    /// The fake host's clock.
    static let now = Date(timeIntervalSince1970: 1_000_000)

    let fleet: String

    init() throws {
        fleet = NSTemporaryDirectory() + "cordon-fleet-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: fleet + "/commands", withIntermediateDirectories: true)
    }

    func with(
        _ document: PolicyDocument = PolicyDocument(), state: LifecycleState = .unlocked,
        _ body: (Fixture) async throws -> Void
    ) async throws {
        defer { try? FileManager.default.removeItem(atPath: fleet) }
        let fleet = self.fleet
        try await Fixture.with(
            documents: [(document, Self.admin)],
            configure: { host in
                host.configuration.fleetDirectory = fleet
                host.lifecycleState = state
            },
            make: { FleetComponent(host: $0) }, body)
    }

    func writeStatus(staleAfter: Date?, device: String = Self.device) throws {
        let status = FleetHandoff.Status(
            device: device, repository: "https://fleet.example", verifiedAt: Self.now.addingTimeInterval(-60),
            freshUntil: staleAfter, staleAfter: staleAfter, versions: ["timestamp": 3], lastError: nil)
        try Data(status.bytes).write(to: URL(fileURLWithPath: fleet + "/status.json"))
    }

    @discardableResult
    func writeCommand(
        _ counter: Int, _ kind: FleetCommand.Kind, app: String? = nil, device: String = Self.device,
        file: Int? = nil, reason: String? = nil
    ) throws -> FleetCommand {
        let command = FleetCommand(
            counter: counter, kind: kind, app: app, issued: Self.now.addingTimeInterval(-120),
            expires: Self.now.addingTimeInterval(3600), reason: reason)
        let bytes = FleetHandoff.commandBytes(command, device: device, verifiedAt: Self.now)
        try Data(bytes).write(
            to: URL(fileURLWithPath: fleet + "/commands/" + FleetHandoff.commandFileName(file ?? counter)))
        return command
    }

    /// Makes a pass and waits until it has ended.
    static func pass(_ fixture: Fixture) async throws {
        try await fixture.run { _, fleet, _ in fleet.scan() }
        for _ in 0..<500 {
            try await Task.sleep(for: .milliseconds(10))
            // The pass's last step is on the store pool or the loop; a pass is over once a no-op
            // submission of both has gone through and none is under way.
            if try await fixture.run({ _, fleet, _ in fleet.isIdle }) { return }
        }
        Issue.record("the pass did not end")
    }

    static func ledger(_ fixture: Fixture) async throws -> [Int: FleetCommandRecord] {
        try await fixture.run { host, _, _ in try host.database.fleetCommands() }
    }

    static func audited(_ fixture: Fixture, _ action: String) async throws -> [AuditEntry] {
        try await fixture.run { host, _, _ in host.audit.filter { $0.action == action } }
    }

    @Test func eachCommandIsExecutedOnceInCounterOrder() async throws {
        try writeStatus(staleAfter: Self.now.addingTimeInterval(600))
        try writeCommand(1, .lock)
        try writeCommand(2, .wipeApp, app: "com.example.notes")
        try writeCommand(3, .refresh)
        try await with { fixture in
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs } == [.lock(reason: .policy, now: 1_000_000)])
            #expect(try await fixture.run { host, _, _ in host.wiped } == ["com.example.notes"])
            let ledger = try await Self.ledger(fixture)
            #expect(ledger.keys.sorted() == [1, 2, 3] && ledger.values.allSatisfy { $0.state == .done })
            #expect(
                try await Self.audited(fixture, "fleet.command").map(\.outcome) == ["executed", "executed", "executed"])
            // The same files again, and a second copy of one under another name: history.
            try writeCommand(1, .lock, file: 7)
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs.count } == 1)
            #expect(try await fixture.run { host, _, _ in host.wiped.count } == 1)
            #expect(try await Self.audited(fixture, "fleet.command").count == 3)
            let status = try await fixture.run { _, fleet, _ in fleet.status(now: 1_000_000) }
            #expect(status?.device == Self.device && status?.lastCommand == "#3 refresh done" && status?.stale == false)
        }
    }

    @Test func replayedAndOtherDeviceCommandsAreRefusedAndAudited() async throws {
        try writeStatus(staleAfter: Self.now.addingTimeInterval(600))
        try writeCommand(2, .lock)
        try await with { fixture in
            try await Self.pass(fixture)
            // Below the highest taken; a different command under a taken counter; another device's.
            try writeCommand(1, .wipe)
            try writeCommand(2, .wipe, file: 5)
            try writeCommand(3, .wipe, device: "device-2")
            try await Self.pass(fixture)
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs } == [.lock(reason: .policy, now: 1_000_000)])
            let refused = try await Self.audited(fixture, "fleet.command").filter { $0.outcome == "refused" }
            #expect(refused.count == 3, "\(refused)")
            #expect(refused.contains { $0.reason.contains("#1 wipe: replayed") })
            #expect(refused.contains { $0.reason.contains("#2 wipe: replayed: a different command") })
            #expect(refused.contains { $0.reason.contains("#3 wipe: otherDevice") })
            let ledger = try await Self.ledger(fixture)
            #expect(ledger[1]?.state == .refused && ledger[3]?.state == .refused)
            #expect(ledger[2]?.state == .done && ledger[2]?.kind == "lock", "the taken command stays recorded")
        }
    }

    @Test func aCommandLeftExecutingIsPerformedAgainThenDone() async throws {
        try writeStatus(staleAfter: Self.now.addingTimeInterval(600))
        try await with { fixture in
            // Killed after `executing`: the file is gone since, the ledger alone says what to do.
            try await fixture.run { host, _, _ in
                try host.database.recordFleetCommand(
                    FleetCommandRecord(
                        counter: 4, digest: [1, 2, 3], kind: "wipeApp", app: "com.example.mail", state: .executing,
                        at: 1))
            }
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.wiped } == ["com.example.mail"])
            #expect(try await Self.ledger(fixture)[4]?.state == .done)
        }
    }

    @Test func aContainerMadeAfterCommandsDoesNotExecuteThem() async throws {
        try writeStatus(staleAfter: Self.now.addingTimeInterval(600))
        try writeCommand(1, .wipe)
        try await with(state: .uninitialized) { fixture in
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs }.isEmpty)
            try await fixture.run { host, fleet, _ in
                host.lifecycleState = .lockedNoKey
                fleet.lifecycleStepped()
            }
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in try host.database.fleetFloor() } == 1)
            #expect(try await fixture.run { host, _, _ in host.inputs }.isEmpty, "the wipe predates the container")
            try writeCommand(2, .lock)
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs } == [.lock(reason: .policy, now: 1_000_000)])
        }
    }

    @Test func commandsWaitForStatusJSON() async throws {
        try writeCommand(1, .lock)
        try await with { fixture in
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs }.isEmpty)
            #expect(try await Self.ledger(fixture).isEmpty)
            try writeStatus(staleAfter: Self.now.addingTimeInterval(600))
            try await Self.pass(fixture)
            #expect(try await fixture.run { host, _, _ in host.inputs } == [.lock(reason: .policy, now: 1_000_000)])
        }
    }

    // MARK: conditions.policyStale

    @Test func policyStaleOffWarnBlockLockOnTheInjectedClock() async throws {
        try writeStatus(staleAfter: Self.now.addingTimeInterval(100))
        for action in PolicyStaleAction.allCases {
            try await with(PolicyDocument(PolicyKeys.Conditions.policyStale(action))) { fixture in
                try await Self.pass(fixture)
                let fresh = try await fixture.run { _, fleet, _ in (fleet.stale, fleet.policyStaleBlock) }
                #expect(fresh.0 == false && fresh.1 == nil)
                // The clock passes staleAfter: judged again as the timer would.
                let stale = try await fixture.run { host, fleet, _ in
                    host.now += 200
                    fleet.evaluateStaleness(why: "test")
                    return (fleet.stale, fleet.policyStaleBlock, fleet.status(now: host.now))
                }
                #expect(stale.0 == true && stale.2?.stale == true && stale.2?.policyStale == action.rawValue)
                #expect((stale.1 != nil) == (action == .block), "\(action)")
                try await Task.sleep(for: .milliseconds(50))
                let inputs = try await fixture.run { host, _, _ in host.inputs }
                #expect(inputs == (action == .lock ? [.lock(reason: .policy, now: 1_000_200)] : []), "\(action)")
                let audited = try await Self.audited(fixture, "fleet.policyStale").map(\.outcome)
                #expect(
                    audited == (action == .off ? [] : action == .lock ? ["lock", "locked"] : [action.rawValue]),
                    "\(action): \(audited)")
            }
            try FileManager.default.createDirectory(atPath: fleet + "/commands", withIntermediateDirectories: true)
            try writeStatus(staleAfter: Self.now.addingTimeInterval(100))
        }
    }

    @Test func aDirectoryWithoutStatusIsStaleAndNoDirectoryIsNoFleet() {
        var reading = FleetDirectory.Reading()
        #expect(FleetComponent.isStale(reading, now: 1_000_000) == nil)
        reading.exists = true
        #expect(FleetComponent.isStale(reading, now: 1_000_000) == true)
        reading.status = FleetHandoff.Status(
            device: "d", repository: "r", verifiedAt: nil, freshUntil: nil,
            staleAfter: Date(timeIntervalSince1970: 1_000_100), versions: [:], lastError: nil)
        #expect(FleetComponent.isStale(reading, now: 1_000_000) == false)
        #expect(FleetComponent.isStale(reading, now: 1_000_100) == true)
    }

    @Test func aBlockingStaleFleetDeniesDecisions() async throws {
        try await ComponentFixture<DecisionsComponent>.with(
            documents: [(PolicyDocument(PolicyKeys.Pasteboard.copyOut(.any)), Self.admin)],
            make: { DecisionsComponent(host: $0) }
        ) { fixture in
            let decisions = try await fixture.run { host, decisions, _ in
                let app = AppFacts(id: "com.example.notes", managed: true)
                let before = decisions.decide(.pasteboardCopy, app: app, peer: nil, length: 1, contentType: nil)
                host.policyStaleBlock = PolicyStaleBlock(reason: "conditions.policyStale is \"block\"", rules: [])
                let after = decisions.decide(.pasteboardCopy, app: app, peer: nil, length: 1, contentType: nil)
                return (before.allowed, after.allowed, after.reason)
            }
            #expect(decisions.0 == true && decisions.1 == false && decisions.2.contains("policyStale"))
        }
    }
}
