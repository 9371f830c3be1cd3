import CordonLifecycle
import CordonProtocol
import Testing

@Suite("AppRegistry: enforcement, thawing and registrations on behalf of a child")
struct AppRegistryEnforcementTests {
    private func keyAvailable(seq: Int) -> CordonEvent {
        CordonEvent(
            seq: seq, payload: .encryptionKeyAvailable(), reason: .userRequest, time: 200, state: .lockedKeyHeld)
    }

    @Test(arguments: [
        (EnforcementAction.freeze, Compliance.frozen), (.terminate, .terminated), (.report, .overdue),
        (.disconnect, .overdue),
    ])
    func anEnforcedAppShowsWhatWasDone(action: EnforcementAction, compliance: Compliance) throws {
        var registry = AppRegistry()
        try registry.register(registration(1))
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        #expect(registry.tick(now: 102).map(\.connection) == [1])
        registry.enforced(1, action)
        #expect(registry.registrations[1]?.compliance == compliance)
        #expect(registry.registrations[1]?.info.compliance == compliance)
    }

    @Test func theKeysReturnThawsOnlyFrozenApps() throws {
        var registry = AppRegistry()
        for connection in 1...3 { try registry.register(registration(connection, "com.example.app\(connection)")) }
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        _ = registry.tick(now: 103)
        registry.enforced(1, .freeze)
        registry.enforced(2, .report)
        let thawed = registry.eventEmitted(keyAvailable(seq: 6))
        #expect(thawed.map(\.connection) == [1])
        #expect(registry.all.allSatisfy { $0.compliance == .compliant })
    }

    @Test func aWipeLeavesFrozenAppsFrozen() throws {
        var registry = AppRegistry()
        try registry.register(registration(1))
        registry.eventEmitted(keyUnavailable(seq: 5, deadline: 102))
        _ = registry.tick(now: 103)
        registry.enforced(1, .freeze)
        let wiped = CordonEvent(seq: 6, payload: .wiped(), reason: .wipe, time: 104, state: .uninitialized)
        #expect(registry.eventEmitted(wiped).isEmpty)
        #expect(registry.registrations[1]?.compliance == .frozen)
        #expect(registry.eventEmitted(keyAvailable(seq: 9)).map(\.connection) == [1])
    }

    /// One app's own revocation (the device's posture): only its registrations owe an
    /// acknowledgement; the container's key coming back leaves it frozen; its own key's return
    /// thaws it.
    @Test func anAppsOwnRevocationOutlastsTheContainersKey() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, "com.example.blocked"))
        try registry.register(registration(2, "com.example.other"))
        registry.appKeyRevoked("com.example.blocked", seq: 4, deadline: 102)
        #expect(registry.registrations[2]?.deadline == nil)
        #expect(registry.tick(now: 102).map(\.connection) == [1])
        registry.enforced(1, .freeze)
        let thawed = registry.eventEmitted(keyAvailable(seq: 6), stillRevoked: ["com.example.blocked"])
        #expect(thawed.isEmpty)
        #expect(registry.registrations[1]?.compliance == .frozen)
        #expect(registry.appKeyReturned("com.example.blocked").map(\.connection) == [1])
        #expect(registry.all.allSatisfy { $0.compliance == .compliant })
        // An acknowledgement of the revocation's seq clears the obligation before the deadline.
        registry.appKeyRevoked("com.example.blocked", seq: 6, deadline: 300)
        try registry.acknowledge(connection: 1, seq: 6, latestSeq: 6)
        #expect(registry.tick(now: 301).isEmpty)
    }

    @Test func aSubscriptionBindsToTheRegisteringParentNotTheChild() throws {
        var registry = AppRegistry()
        try registry.register(
            AppRegistration(
                connection: 1, appId: "com.example.wrapped", pid: 500, ownerPid: 400, executable: "/usr/bin/sleep",
                managed: true, token: "t"))
        #expect(throws: CordonError.invalidToken) { try registry.bindSubscriber(token: "t", subscriber: 2, pid: 500) }
        try registry.bindSubscriber(token: "t", subscriber: 2, pid: 400)
        #expect(registry.registration(subscribedOn: 2)?.pid == 500)
    }
}
