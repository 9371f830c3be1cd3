import CordonLifecycle
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `EventBusComponent` against a fake host: `Subscribe` needs `more`, a subscriber gets the
/// state snapshot first and then every event, a token binds it to its registration, and an
/// event withheld from an app's subscribers reaches only the others (docs/ARCHITECTURE.md,
/// "An event, from the lifecycle machine to every subscriber").
@Suite struct EventBusComponentTests {
    typealias Fixture = ComponentFixture<EventBusComponent>

    /// `com.example.notes` registered on connection 1 by pid 101 (which subscribes on connection 1).
    static func with(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            configure: { host in
                host.lastSeq = 7
                host.lifecycleState = .lockedKeyHeld
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "notes-token"))
            }, make: { EventBusComponent(host: $0) }, body)
    }

    static func subscribe(from id: ConnectionID, token: String? = nil, more: Bool = true, in fixture: Fixture)
        async throws -> JSONValue
    {
        let parameters: [String: JSONValue] = token.map { ["token": .string($0)] } ?? [:]
        return try await fixture.call(.subscribe, parameters, from: id, more: more) { try $0.serveSubscribe($1) }
    }

    @Test func subscribeWithoutMoreIsRefused() async throws {
        try await Self.with { fixture in
            let reply = try await Self.subscribe(from: 2, more: false, in: fixture)
            #expect(reply["error"] == .string("org.varlink.service.ExpectedMore"))
            #expect(try await fixture.run { _, bus, _ in bus.subscriberCount } == 0)
            #expect(try await fixture.written(to: 2).isEmpty)
        }
    }

    @Test func aSubscriberBoundByTokenGetsTheSnapshotFirst() async throws {
        try await Self.with { fixture in
            _ = try await Self.subscribe(from: 1, token: "notes-token", in: fixture)
            let (bound, told, subscribedApp) = try await fixture.run { host, _, _ in
                (host.boundSubscribers, host.subscribersBound, host.registry.registration(subscribedOn: 1)?.appId)
            }
            #expect(bound == [1])
            // Told after the snapshot went out, so posture's events for the app follow it.
            #expect(told == [1])
            #expect(subscribedApp == "com.example.notes")
            let frames = try await fixture.written(to: 1)
            #expect(frames.count == 1)
            let snapshot = frames.first?["parameters"]?["event"]
            #expect(frames.first?["continues"] == .bool(true))
            #expect(snapshot?["kind"] == .string("State"))
            #expect(snapshot?["seq"] == .int(7))
            #expect(snapshot?["state"] == .string("lockedKeyHeld"))
            // Then every event, in order.
            try await fixture.run { _, bus, _ in
                bus.publish(CordonEvent(seq: 8, payload: .didUnlock, reason: .userRequest, time: 0, state: .unlocked))
            }
            let next = try await fixture.written(to: 1)
            #expect(next.map { $0["parameters"]?["event"]?["seq"] } == [.int(8)])
        }
    }

    @Test func aTokenOfNoRegistrationIsRefusedAndNothingIsSent() async throws {
        try await Self.with { fixture in
            let reply = try await Self.subscribe(from: 1, token: "someone-else", in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.InvalidToken"))
            #expect(try await fixture.run { _, bus, _ in bus.subscriberCount } == 0)
            #expect(try await fixture.written(to: 1).isEmpty)
        }
    }

    @Test func anEventWithheldFromAnAppReachesOnlyTheOthers() async throws {
        try await Self.with { fixture in
            _ = try await Self.subscribe(from: 1, token: "notes-token", in: fixture)
            _ = try await Self.subscribe(from: 2, in: fixture)
            _ = try await fixture.written(to: 1)
            _ = try await fixture.written(to: 2)
            try await fixture.run { _, bus, _ in
                bus.publish(
                    CordonEvent(
                        seq: 8, payload: .encryptionKeyAvailable(), reason: .userRequest, time: 0, state: .unlocked),
                    withholdingFrom: ["com.example.notes"])
            }
            #expect(try await fixture.written(to: 1).isEmpty)
            let other = try await fixture.written(to: 2)
            #expect(other.map { $0["parameters"]?["event"]?["kind"] } == [.string("EncryptionKeyAvailable")])
            // A closed connection is no subscriber any more.
            try await fixture.run { _, bus, _ in bus.connectionClosed(2) }
            #expect(try await fixture.run { _, bus, _ in bus.subscriberCount } == 1)
        }
    }
}
