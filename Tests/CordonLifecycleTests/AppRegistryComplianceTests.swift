import CordonLifecycle
import CordonProtocol
import Testing

@Suite("AppRegistry: acknowledgements and deadlines")
struct AppRegistryComplianceTests {
    /// Two managed apps (connections 1 and 2) and one unmanaged app (connection 3).
    private func populated() throws -> AppRegistry {
        var registry = AppRegistry()
        try registry.register(registration(1, "com.example.a", pid: 1))
        try registry.register(registration(2, "com.example.b", pid: 2))
        try registry.register(registration(3, "com.example.viewer", pid: 3, managed: false))
        return registry
    }

    @Test func keyUnavailableMakesManagedAppsPending() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        for connection in [1, 2] {
            let app = try #require(registry.registrations[connection])
            #expect(app.pendingSeq == 5)
            #expect(app.deadline == 102)
            #expect(app.compliance == .pending)
            #expect(app.info.pendingSeq == 5)
        }
        let viewer = try #require(registry.registrations[3])
        #expect(viewer.pendingSeq == nil)
        #expect(viewer.deadline == nil)
        #expect(viewer.compliance == .unmanaged)
        #expect(registry.nextDeadline == 102)
    }

    @Test func aDeadlinelessRevocationIsDueAtOnce() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, time: 100, deadline: nil))
        #expect(registry.registrations[1]?.deadline == 100)
    }

    @Test(arguments: [CordonEvent.Payload.didLock, .didUnlock, .state, .policyDidChange(policyVersion: "v")])
    func otherEventsAskNothing(payload: CordonEvent.Payload) throws {
        var registry = try populated()
        registry.eventEmitted(
            CordonEvent(seq: 1, payload: payload, reason: .userRequest, time: 1, state: .lockedKeyHeld))
        #expect(registry.all.allSatisfy { $0.pendingSeq == nil && $0.deadline == nil })
        #expect(registry.nextDeadline == nil)
    }

    @Test func acknowledgingClearsThePendingObligation() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5))
        try registry.acknowledge(connection: 1, seq: 5, latestSeq: 5)
        let app = try #require(registry.registrations[1])
        #expect(app.pendingSeq == nil)
        #expect(app.deadline == nil)
        #expect(app.lastAckSeq == 5)
        #expect(app.compliance == .compliant)
        #expect(registry.registrations[2]?.compliance == .pending, "other apps still owe their acknowledgement")
    }

    @Test func acknowledgingAnOlderEventKeepsTheNewerPending() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5))
        try registry.acknowledge(connection: 1, seq: 3, latestSeq: 5)
        #expect(registry.registrations[1]?.pendingSeq == 5)
        #expect(registry.registrations[1]?.lastAckSeq == 3)
    }

    @Test func acknowledgingALaterEventAlsoClears() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5))
        try registry.acknowledge(connection: 1, seq: 7, latestSeq: 7)
        #expect(registry.registrations[1]?.pendingSeq == nil)
        #expect(registry.registrations[1]?.lastAckSeq == 7)
        try registry.acknowledge(connection: 1, seq: 6, latestSeq: 7)
        #expect(registry.registrations[1]?.lastAckSeq == 7, "lastAckSeq never goes back")
    }

    @Test(arguments: [0, -1, 6, 1_000])
    func acknowledgingAnUnknownSeqFails(seq: Int) throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5))
        #expect(throws: CordonError.unknownSequence(seq: seq)) {
            try registry.acknowledge(connection: 1, seq: seq, latestSeq: 5)
        }
        #expect(registry.registrations[1]?.pendingSeq == 5)
        #expect(registry.registrations[1]?.lastAckSeq == nil)
    }

    @Test func acknowledgingFromAnUnregisteredConnectionFails() throws {
        var registry = try populated()
        #expect(throws: CordonError.notRegistered) {
            try registry.acknowledge(connection: 99, seq: 1, latestSeq: 5)
        }
    }

    @Test func tickPastTheDeadlineReportsOverdueAppsOnce() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        try registry.acknowledge(connection: 2, seq: 5, latestSeq: 5)

        #expect(registry.tick(now: 101.999).isEmpty)
        let overdue = registry.tick(now: 102)
        #expect(overdue.map(\.connection) == [1])
        #expect(overdue.first?.overdue == true)
        #expect(registry.registrations[1]?.compliance == .overdue)
        #expect(registry.registrations[2]?.compliance == .compliant)
        #expect(registry.registrations[3]?.compliance == .unmanaged)

        #expect(registry.tick(now: 200).isEmpty, "an app is reported overdue once")
        #expect(registry.nextDeadline == nil, "overdue apps have no further deadline")
    }

    @Test func overdueAppsAreReportedInConnectionOrder() throws {
        var registry = AppRegistry()
        for connection in [9, 4, 7, 1] { try registry.register(registration(connection, pid: connection)) }
        registry.eventEmitted(keyUnavailable(seq: 1, deadline: 10))
        #expect(registry.tick(now: 11).map(\.connection) == [1, 4, 7, 9])
    }

    @Test func aLateAcknowledgementClearsOverdue() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        _ = registry.tick(now: 103)
        try registry.acknowledge(connection: 1, seq: 5, latestSeq: 5)
        #expect(registry.registrations[1]?.compliance == .compliant)
        #expect(registry.registrations[1]?.overdue == false)
    }

    @Test(arguments: [CordonEvent.Payload.encryptionKeyAvailable(), .wiped()])
    func keyReturnOrWipeLiftsEveryObligation(payload: CordonEvent.Payload) throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        _ = registry.tick(now: 103)
        #expect(registry.registrations[1]?.compliance == .overdue)
        registry.eventEmitted(
            CordonEvent(seq: 6, payload: payload, reason: .userRequest, time: 104, state: .lockedKeyHeld))
        for app in registry.all {
            #expect(app.pendingSeq == nil)
            #expect(app.deadline == nil)
            #expect(!app.overdue)
        }
        #expect(registry.nextDeadline == nil)
    }

    @Test func aNewRevocationAfterTheKeyReturnedCanBeOverdueAgain() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, time: 100, deadline: 102))
        #expect(registry.tick(now: 103).count == 2)
        registry.eventEmitted(
            CordonEvent(
                seq: 6, payload: .encryptionKeyAvailable(), reason: .userRequest, time: 110, state: .lockedKeyHeld))
        registry.eventEmitted(keyUnavailable(seq: 8, time: 120, deadline: 122))
        #expect(registry.registrations[1]?.pendingSeq == 8)
        #expect(registry.tick(now: 122).map(\.connection) == [1, 2])
    }

    @Test func nextDeadlineIsTheEarliestPendingOne() throws {
        var registry = try populated()
        #expect(registry.nextDeadline == nil)
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        try registry.register(registration(4, "com.example.late", pid: 4))
        #expect(registry.nextDeadline == 102)
        try registry.acknowledge(connection: 1, seq: 5, latestSeq: 5)
        try registry.acknowledge(connection: 2, seq: 5, latestSeq: 5)
        #expect(registry.nextDeadline == nil, "the app registered after the event owes nothing")
    }

    @Test func closingAPendingAppDropsItsObligation() throws {
        var registry = try populated()
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        registry.connectionClosed(1)
        registry.connectionClosed(2)
        #expect(registry.nextDeadline == nil)
        #expect(registry.tick(now: 500).isEmpty)
    }
}
