import CordonLifecycle
import CordonProtocol
import Testing

/// A registration on connection `connection` for process `pid`.
func registration(
    _ connection: ConnectionID, _ appId: String = "com.example.notes", pid: Int = 4242, managed: Bool = true,
    token: String? = nil
) -> AppRegistration {
    AppRegistration(
        connection: connection, appId: appId, pid: pid, executable: "/usr/bin/notes", managed: managed,
        token: token ?? "token-\(connection)")
}

/// A revocation event as the lifecycle machine emits it.
func keyUnavailable(seq: Int, time: Double = 100, deadline: Double? = 102) -> CordonEvent {
    CordonEvent(
        seq: seq, payload: .encryptionKeyUnavailable(ackDeadline: deadline), reason: .logout, time: time,
        state: .lockedNoKey)
}

@Suite("AppRegistry: registration and subscribers")
struct AppRegistryTests {
    @Test func registerStoresTheAppAsCompliant() throws {
        var registry = AppRegistry()
        try registry.register(registration(1))
        let stored = try #require(registry.registrations[1])
        #expect(stored.appId == "com.example.notes")
        #expect(stored.compliance == .compliant)
        #expect(stored.subscriber == nil)
        #expect(
            stored.info
                == AppInfo(
                    appId: "com.example.notes", pid: 4242, executable: "/usr/bin/notes", managed: true,
                    subscribed: false, compliance: .compliant, pendingSeq: nil, lastAckSeq: nil))
    }

    @Test func unmanagedAppsReportUnmanaged() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, managed: false))
        #expect(registry.registrations[1]?.compliance == .unmanaged)
        #expect(registry.registrations[1]?.info.managed == false)
    }

    @Test func aConnectionRegistersOnlyOnce() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, "com.example.first"))
        #expect(throws: CordonError.alreadyRegistered(appId: "com.example.first")) {
            try registry.register(registration(1, "com.example.second"))
        }
        #expect(registry.registrations[1]?.appId == "com.example.first")
    }

    @Test(arguments: [
        "", "com example", "com/example", "../etc", ".com.example", "com.example.", "com..example", "café.app",
    ])
    func invalidAppIdsAreRefused(appId: String) throws {
        var registry = AppRegistry()
        let error = try #require(throws: CordonError.self) { try registry.register(registration(1, appId)) }
        guard case .invalidAppId(let refused, let reason) = error else {
            Issue.record("expected InvalidAppId, got \(error)")
            return
        }
        #expect(refused == appId)
        #expect(!reason.isEmpty)
        #expect(registry.registrations.isEmpty)
    }

    @Test func sameAppMayRegisterOnSeveralConnections() throws {
        var registry = AppRegistry()
        try registry.register(registration(1))
        try registry.register(registration(2))
        #expect(registry.all.map(\.connection) == [1, 2])
    }

    @Test func allListsRegistrationsInConnectionOrder() throws {
        var registry = AppRegistry()
        for connection in [7, 3, 11, 5] { try registry.register(registration(connection)) }
        #expect(registry.all.map(\.connection) == [3, 5, 7, 11])
    }

    @Test func bindSubscriberLinksBothWays() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 100)
        #expect(registry.registrations[1]?.subscriber == 9)
        #expect(registry.registrations[1]?.info.subscribed == true)
        #expect(registry.registration(subscribedOn: 9)?.connection == 1)
        #expect(registry.registration(subscribedOn: 1) == nil)
    }

    @Test func bindSubscriberRefusesAnotherProcess() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        #expect(throws: CordonError.invalidToken) {
            try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 101)
        }
        #expect(registry.registrations[1]?.subscriber == nil)
        #expect(registry.registration(subscribedOn: 9) == nil)
    }

    @Test func bindSubscriberRefusesAnUnknownToken() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        #expect(throws: CordonError.invalidToken) {
            try registry.bindSubscriber(token: "no-such-token", subscriber: 9, pid: 100)
        }
    }

    @Test func rebindingMovesTheSubscription() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 100)
        try registry.bindSubscriber(token: "token-1", subscriber: 10, pid: 100)
        #expect(registry.registrations[1]?.subscriber == 10)
        #expect(registry.registration(subscribedOn: 9) == nil)
        #expect(registry.registration(subscribedOn: 10)?.connection == 1)
        // Closing the old subscriber connection no longer affects the registration.
        registry.connectionClosed(9)
        #expect(registry.registrations[1]?.subscriber == 10)
    }

    @Test func closingTheSubscriberKeepsTheRegistration() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 100)
        registry.connectionClosed(9)
        #expect(registry.registrations[1] != nil)
        #expect(registry.registrations[1]?.subscriber == nil)
        #expect(registry.registration(subscribedOn: 9) == nil)
        // The token still works for a new subscription.
        try registry.bindSubscriber(token: "token-1", subscriber: 12, pid: 100)
        #expect(registry.registrations[1]?.subscriber == 12)
    }

    @Test func closingTheRegistrationRemovesItsTokenAndSubscriberLink() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, pid: 100))
        try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 100)
        registry.connectionClosed(1)
        #expect(registry.registrations.isEmpty)
        #expect(registry.registration(subscribedOn: 9) == nil)
        #expect(throws: CordonError.invalidToken) {
            try registry.bindSubscriber(token: "token-1", subscriber: 9, pid: 100)
        }
        // The connection id can register again.
        try registry.register(registration(1, pid: 100))
        #expect(registry.registrations.count == 1)
    }

    @Test func closingAnUnknownConnectionIsHarmless() throws {
        var registry = AppRegistry()
        try registry.register(registration(1))
        registry.connectionClosed(42)
        #expect(registry.all.map(\.connection) == [1])
    }

    @Test func tokensSelectTheirOwnRegistration() throws {
        var registry = AppRegistry()
        try registry.register(registration(1, "com.example.a", pid: 100))
        try registry.register(registration(2, "com.example.b", pid: 200))
        try registry.bindSubscriber(token: "token-2", subscriber: 20, pid: 200)
        #expect(registry.registration(subscribedOn: 20)?.appId == "com.example.b")
        #expect(registry.registrations[1]?.subscriber == nil)
        #expect(throws: CordonError.invalidToken) {
            try registry.bindSubscriber(token: "token-1", subscriber: 10, pid: 200)
        }
    }
}

@Suite("AppIdentifier")
struct AppIdentifierTests {
    @Test(arguments: ["com.example.notes", "notes", "a", "org.example-app.v2", "com.Example_App.1", "0.9"])
    func acceptsReverseDNSNames(appId: String) {
        #expect(AppIdentifier.problem(with: appId) == nil)
    }

    @Test func explainsEachProblem() {
        #expect(AppIdentifier.problem(with: "") == "the app id is empty")
        #expect(
            AppIdentifier.problem(with: String(repeating: "a", count: 256)) == "the app id is longer than 255 bytes")
        #expect(AppIdentifier.problem(with: String(repeating: "a", count: 255)) == nil)
        #expect(
            AppIdentifier.problem(with: "com.exämple")
                == "the app id may only contain ASCII letters, digits, '.', '_' and '-'")
        #expect(
            AppIdentifier.problem(with: "com..example")
                == "the app id must be dot-separated names, e.g. com.example.notes")
    }

    @Test(arguments: ["com\u{0}x", "com\nx", "a b", "a/b", "a:b", "a*b", "com.例え"])
    func refusesOtherCharacters(appId: String) {
        #expect(AppIdentifier.problem(with: appId) != nil)
    }
}
