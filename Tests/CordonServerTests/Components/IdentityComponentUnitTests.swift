import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `IdentityComponent` against a fake host, with no provider configured: `Status` lists none, and
/// a token goes only to a verified managed registration whose domain the policy names; every
/// refusal is audited (docs/ARCHITECTURE.md, "Identity"). The sign-in flows themselves are tested
/// against a provider in `IdentityComponentTests`.
@Suite struct IdentityComponentUnitTests {
    typealias Fixture = ComponentFixture<IdentityComponent>

    /// Connection 1 is the managed `com.example.mail`; connection 2 registered nothing.
    static func with(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            configure: { host in
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.mail", pid: 101, executable: "/usr/bin/mail",
                        managed: true, token: "a"))
            }, make: { IdentityComponent(host: $0) }
        ) { fixture in
            try await body(fixture)
            try await fixture.run { _, identity, _ in identity.shutdown() }
        }
    }

    static func getToken(from id: ConnectionID, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.identityGetToken, ["domain": .string("mail.corp.example")], from: id) {
            try $0.serve(.getToken, $1)
        }
    }

    @Test func statusWithNoProvidersListsNone() async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(.identityStatus) { try $0.serve(.status, $1) }
            let status = try #require(reply["parameters"]).decoded(as: IdentityStatusReply.self)
            #expect(status.providers.isEmpty)
        }
    }

    @Test func anUnregisteredCallerGetsNoTokenAndTheRefusalIsAudited() async throws {
        try await Self.with { fixture in
            let reply = try await Self.getToken(from: 2, in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
            let audit = try await fixture.run { host, _, _ in host.audit }
            #expect(audit.count == 1)
            #expect(audit.first?.appId == nil)
            #expect(audit.first?.action == "identity.token")
            #expect(audit.first?.outcome == "refused")
            #expect(audit.first?.reason == "mail.corp.example: io.cordon.App.NotRegistered")
        }
    }

    @Test func aDomainThePolicyDoesNotNameIsRefused() async throws {
        try await Self.with { fixture in
            let reply = try await Self.getToken(from: 1, in: fixture)
            #expect(reply["error"] == .string("io.cordon.Identity.UnknownDomain"))
            #expect(reply["parameters"]?["domain"] == .string("mail.corp.example"))
            let audit = try await fixture.run { host, _, _ in host.audit.map { [$0.appId, $0.outcome] as [String?] } }
            #expect(audit == [["com.example.mail", "refused"]])
            // No flight was started for it.
            #expect(try await fixture.run { _, identity, _ in identity.flights.isEmpty })
        }
    }
}
