import CordonIdentity
import CordonKit
import CordonPolicy
import CordonProtocol
import CordonServer
import Foundation
import Testing

/// Issue #31, "Identity never waits on a dead provider" (docs/components/identity.md, "Background
/// renewal and backoff"), against the local authlib provider held, made unavailable or stopped:
/// a token that is still valid is answered while its due refresh hangs at the provider and is
/// replaced by what that refresh brings; a renewal that failed holds the next back (requests
/// counted at the provider), an expired token's call gets the failure's cause at once, and the
/// refresh goes through once the backoff has passed and the provider is back; a sign-in and a
/// sign-out at a port that refuses report it. Nothing waits on time: the agent's clock is the
/// test's, and every wait is for an event.
@Suite("Identity with a provider that is down", .serialized)
struct IdentityDeadProviderTests {
    static let domain = IdentityComponentTests.domain

    /// The test's poll delay and browser, and a backoff of 60 s then 120 s, … (jitter 0: half the
    /// ceiling), so a 30-second token expires within the first.
    static func configure(_ configuration: inout AgentConfiguration) {
        IdentityComponentTests.configure(&configuration)
        configuration.identityRenewalBackoff = RenewalBackoff(base: 120, cap: 600)
        configuration.identityJitter = { 0 }
    }

    /// An agent on `clock` (no idle lock), signed in at `provider`, whose 30-second tokens are
    /// always within the refresh margin; `body` gets the CLI client, an app and the first token.
    static func signedIn(
        _ provider: IdentityProviderPeer, clock: MovableClock,
        _ body: (CordonClient, CordonApp, IdentityTokenReply) async throws -> Void
    ) async throws {
        try provider.admin("/admin/config", [FormField("short_lived", "1")])
        try await withTestAgent(
            settings: .with { $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0 }, policies: true, configure: Self.configure,
            clock: clock.read
        ) { agent in
            let client = try await IdentityComponentTests.prepare(agent, provider)
            let mail = try await agent.app("com.example.mail")
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await IdentityComponentTests.approveSignIn(client, provider)
            let first = try await signedIn
            try await body(client, mail, first)
            await mail.close()
            await client.close()
        }
    }

    /// A counter of the provider's `/admin/state`.
    static func counter(_ provider: IdentityProviderPeer, _ name: String) throws -> Int {
        try #require((try provider.object("/admin/state")[name] as? NSNumber)?.intValue, "no \(name)")
    }

    /// The agent's `identity.refresh` records with `outcome`.
    static func refreshes(_ client: CordonClient, _ outcome: String) async throws -> [AuditEntry] {
        try await client.audit().filter { $0.action == "identity.refresh" && $0.outcome == outcome }
    }

    @Test("a valid token is answered while its due refresh hangs at the provider; that refresh then replaces it")
    func validTokenWhileTheRefreshHangs() async throws {
        let provider = try IdentityProviderPeer()
        try await Self.signedIn(provider, clock: MovableClock()) { client, mail, first in
            let before = try Self.counter(provider, "token_requests")
            // The provider accepts token requests and answers none until released.
            try provider.admin("/admin/config", [FormField("hold_token", "1")])
            let answered = try await mail.identity.token(for: Self.domain)
            #expect(answered.accessToken == first.accessToken)
            try await eventually("the refresh reaches the provider and hangs there") {
                try Self.counter(provider, "held_token_requests") == 1
            }
            // The answer came while the refresh still hangs: it has neither succeeded nor failed.
            #expect(try await client.audit().filter { $0.action == "identity.refresh" }.isEmpty)
            // Every call meanwhile gets the token at once, and none starts a second refresh.
            for _ in 0..<3 {
                #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            }
            #expect(try Self.counter(provider, "token_requests") == before + 1)
            #expect(try Self.counter(provider, "held_token_requests") == 1)
            try provider.admin("/admin/config", [FormField("hold_token", "0")])
            try await eventually("the background refresh is stored") {
                try await Self.refreshes(client, "allow").count == 1
            }
            let replaced = try await mail.identity.token(for: Self.domain)
            #expect(replaced.accessToken != first.accessToken)
        }
    }

    @Test("calls within the backoff do not reach a provider that is down; the refresh goes through once it is back")
    func backoffHoldsRenewalsBack() async throws {
        let provider = try IdentityProviderPeer()
        let clock = MovableClock()
        try await Self.signedIn(provider, clock: clock) { client, mail, first in
            let before = try Self.counter(provider, "token_requests")
            try provider.admin("/admin/config", [FormField("unavailable", "1")])
            // The valid token, at once; the refresh beside it fails (HTTP 503).
            #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            try await eventually("the failed refresh") { try await Self.refreshes(client, "failed").count == 1 }
            #expect(try Self.counter(provider, "token_requests") == before + 1)
            // Within the backoff (60 s): the token, and no request.
            for _ in 0..<5 {
                #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            }
            #expect(try Self.counter(provider, "token_requests") == before + 1)
            // The token expired, the backoff still holds: the failure's cause at once, no request.
            let down = CordonError.signInFailed(
                provider: "local", step: "refresh", reason: "the provider answered HTTP 503")
            clock.advance(by: 31)
            await #expect(throws: down) { try await mail.identity.token(for: Self.domain) }
            #expect(try Self.counter(provider, "token_requests") == before + 1)
            // Past the backoff: one refresh, failing again; the next backoff is twice as long (120 s).
            clock.advance(by: 30)
            await #expect(throws: down) { try await mail.identity.token(for: Self.domain) }
            #expect(try Self.counter(provider, "token_requests") == before + 2)
            clock.advance(by: 100)
            await #expect(throws: down) { try await mail.identity.token(for: Self.domain) }
            #expect(try Self.counter(provider, "token_requests") == before + 2)
            // The provider back and the backoff passed: the refresh brings a new token.
            try provider.admin("/admin/config", [FormField("unavailable", "0")])
            clock.advance(by: 21)
            let renewed = try await mail.identity.token(for: Self.domain)
            #expect(renewed.accessToken != first.accessToken)
            #expect(try Self.counter(provider, "token_requests") == before + 3)
            #expect(try await Self.refreshes(client, "allow").count == 1)
            // A success forgets the failures: the next due refresh is tried at once.
            try provider.admin("/admin/config", [FormField("unavailable", "1")])
            _ = try await mail.identity.token(for: Self.domain)
            try await eventually("the next refresh is tried") {
                try Self.counter(provider, "token_requests") == before + 4
            }
        }
    }

    @Test("a stopped provider: the valid token is answered, and once it expired the refusal at once")
    func stoppedProvider() async throws {
        let provider = try IdentityProviderPeer()
        let clock = MovableClock()
        try await Self.signedIn(provider, clock: clock) { client, mail, first in
            provider.stop()
            #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            let refused = "the connection to 127.0.0.1:\(provider.port) was refused"
            try await eventually("the refused refresh") {
                try await Self.refreshes(client, "failed").contains { $0.reason.hasSuffix(refused) }
            }
            clock.advance(by: 31)
            await #expect(throws: CordonError.signInFailed(provider: "local", step: "refresh", reason: refused)) {
                try await mail.identity.token(for: Self.domain)
            }
            // The backoff answered it: no second refresh was tried.
            #expect(try await Self.refreshes(client, "failed").count == 1)
        }
    }

    @Test("past the grace while the backoff holds: SessionExpired at once, no renewal tried")
    func graceEdgeWithinTheBackoff() async throws {
        let provider = try IdentityProviderPeer()
        let clock = MovableClock()
        try await withTestAgent(
            settings: .with { $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0 }, policies: true, configure: Self.configure,
            clock: clock.read
        ) { agent in
            let client = try await IdentityComponentTests.prepare(
                agent, provider, extra: #", "offlineGraceMinutes": 4"#)
            let mail = try await agent.app("com.example.mail")
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await IdentityComponentTests.approveSignIn(client, provider)
            let first = try await signedIn
            let before = try Self.counter(provider, "token_requests")
            try provider.admin("/admin/config", [FormField("unavailable", "1")])
            // Past half the grace: the token, and a renewal beside it that fails.
            clock.advance(by: 200)
            #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            try await eventually("the failed renewal") { try await Self.refreshes(client, "failed").count == 1 }
            // Past the grace (240 s), within the 60 s backoff: expired at once, the provider not asked.
            clock.advance(by: 45)
            await #expect(throws: CordonError.sessionExpired(provider: "local")) {
                try await mail.identity.token(for: Self.domain)
            }
            #expect(try Self.counter(provider, "token_requests") == before + 1)
            // Past the backoff, the provider back: the one renewal reaches it, and its token is given.
            try provider.admin("/admin/config", [FormField("unavailable", "0")])
            clock.advance(by: 20)
            let renewed = try await mail.identity.token(for: Self.domain)
            #expect(renewed.accessToken != first.accessToken)
            #expect(try Self.counter(provider, "token_requests") == before + 2)
            await mail.close()
            await client.close()
        }
    }

    @Test("a sign-in and a sign-out at a port that refuses report the refusal")
    func refusedSignInAndSignOut() async throws {
        let provider = try IdentityProviderPeer()
        try await Self.signedIn(provider, clock: MovableClock()) { client, _, _ in
            provider.stop()
            let refused = "the connection to 127.0.0.1:\(provider.port) was refused"
            await #expect(
                throws: CordonError.signInFailed(provider: "local", step: "deviceAuthorization", reason: refused)
            ) {
                try await client.signIn(provider: "local") { _ in }
            }
            let signedOut = try await client.signOut()
            #expect(
                signedOut == [
                    IdentitySignedOut(provider: "local", sessions: 2, revoked: false, revocationProblem: refused)
                ])
        }
    }
}
