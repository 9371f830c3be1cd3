import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `PasteboardComponent` against a fake host: the policy decides (for real), the fake says who
/// the caller is registered as and whether the container is unlocked (docs/ARCHITECTURE.md, "Components").
@Suite struct PasteboardComponentTests {
    typealias Fixture = ComponentFixture<PasteboardComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)

    /// Connection 1 is `com.example.notes`, connection 2 `com.example.mail`, both managed.
    static func with(
        _ document: PolicyDocument = PolicyDocument(), _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(document, admin)],
            configure: { host in
                host.registrations[1] = AppRegistration(
                    connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes", managed: true,
                    token: "a")
                host.registrations[2] = AppRegistration(
                    connection: 2, appId: "com.example.mail", pid: 102, executable: "/usr/bin/mail", managed: true,
                    token: "b")
            }, make: { PasteboardComponent(host: $0) }, body)
    }

    static func copy(_ text: String, from id: ConnectionID, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.copy, ["content": .string(text)], from: id) { try $0.serve(.copy, $1) }
    }

    static func paste(from id: ConnectionID, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.paste, from: id) { try $0.serve(.paste, $1) }
    }

    @Test func whatOneManagedAppCopiesAnotherPastes() async throws {
        try await Self.with { fixture in
            _ = try await Self.copy("meeting at noon", from: 1, in: fixture)
            let pasted = try await Self.paste(from: 2, in: fixture)
            #expect(pasted["parameters"]?["content"] == .string("meeting at noon"))
            #expect(pasted["parameters"]?["source"] == .string("com.example.notes"))
        }
    }

    @Test func aBlockedSourceIsDeniedWithTheRuleThatSaidSo() async throws {
        let document = PolicyDocument(overrides: [
            PolicyOverride(apps: ["com.example.notes"], PolicyKeys.Pasteboard.copyOut(.blocked))
        ])
        try await Self.with(document) { fixture in
            _ = try await Self.copy("secret", from: 1, in: fixture)
            let pasted = try await Self.paste(from: 2, in: fixture)
            #expect(pasted["error"] == .string("io.cordon.App.Denied"))
            let decisions = try await fixture.run { host, _, _ in host.decisions.map(\.allowed) }
            #expect(decisions == [true, false])
        }
    }

    @Test func nothingLeavesThePasteboardWhileLocked() async throws {
        try await Self.with { fixture in
            _ = try await Self.copy("draft", from: 1, in: fixture)
            try await fixture.run { host, _, _ in host.lifecycleState = .lockedKeyHeld }
            #expect(try await Self.paste(from: 2, in: fixture)["error"] == .string("io.cordon.Agent.Locked"))
        }
    }

    @Test func anUnregisteredCallerIsRefusedBeforeAnyDecision() async throws {
        try await Self.with { fixture in
            try await fixture.run { host, _, _ in host.registrations[1] = nil }
            #expect(try await Self.copy("x", from: 1, in: fixture)["error"] == .string("io.cordon.App.NotRegistered"))
            #expect(try await fixture.run { host, _, _ in host.decisions.isEmpty })
        }
    }

    @Test func aRevocationEmptiesThePasteboard() async throws {
        try await Self.with { fixture in
            _ = try await Self.copy("draft", from: 1, in: fixture)
            try await fixture.run { _, pasteboard, _ in
                pasteboard.observe(
                    CordonEvent(
                        seq: 2, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .logout, time: 0,
                        state: .lockedNoKey))
            }
            #expect(try await Self.paste(from: 2, in: fixture)["error"] == .string("io.cordon.Pasteboard.Empty"))
        }
    }
}
