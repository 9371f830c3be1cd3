import CordonLifecycle
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `UnlockPromptComponent` against a fake host: `RequestUnlock` is for verified managed apps, is
/// answered at once while unlocked (no prompt, nothing fed to the lifecycle), and refused before
/// the container has a passcode (docs/ARCHITECTURE.md, "Components").
@Suite struct UnlockPromptComponentTests {
    typealias Fixture = ComponentFixture<UnlockPromptComponent>

    static func with(_ state: LifecycleState, _ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            configure: { host in
                host.lifecycleState = state
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "a"))
            }, make: { UnlockPromptComponent(host: $0) }, body)
    }

    static func request(from id: ConnectionID = 1, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.requestUnlock, ["timeoutSeconds": .int(5)], from: id) { try $0.serveRequestUnlock($1) }
    }

    @Test func whileUnlockedItAnswersAtOnceWithoutAPrompt() async throws {
        try await Self.with(.unlocked) { fixture in
            let reply = try await Self.request(in: fixture)
            let answer = try #require(reply["parameters"]).decoded(as: RequestUnlockReply.self)
            #expect(answer == RequestUnlockReply(state: .unlocked, prompted: false))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty && host.requests.isEmpty })
        }
    }

    @Test func beforeInitializationItIsRefused() async throws {
        try await Self.with(.uninitialized) { fixture in
            let reply = try await Self.request(in: fixture)
            #expect(reply["error"] == .string("io.cordon.Agent.NotInitialized"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }

    @Test func anUnregisteredCallerIsRefused() async throws {
        try await Self.with(.lockedKeyHeld) { fixture in
            let reply = try await Self.request(from: 2, in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }
}
