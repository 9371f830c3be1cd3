import CordonIdentity
import CordonKit
import CordonLocking
import CordonPolicy
import CordonProtocol
import CordonServer
import Foundation
import Synchronization
import Testing

/// `io.cordon.Identity` over the agent's socket against the local authlib provider
/// (docs/ARCHITECTURE.md, "Identity"; docs/THREAT-MODEL.md, "Identity"): the device grant and the
/// loopback code flow, one sign-in for every app of an access group, refresh rotation, a refused
/// refresh signing in again, sign-out with revocation and `DidSignOut`, and the callers refused.
@Suite("io.cordon.Identity against the local authlib provider", .serialized)
struct IdentityComponentTests {
    static let domain = "mail.corp.example"
    static let group = ("corp", ["com.example.mail", "com.example.calendar"], [domain])

    /// Polls every 20 ms instead of the provider's 5 s; the browser is the stand-in.
    static func configure(_ configuration: inout AgentConfiguration) {
        configuration.identityPollDelay = 0.02
        configuration.identityBrowser = IdentityProviderPeer.browser
    }

    /// The provider's policy in force, the container initialised and unlocked.
    static func prepare(
        _ agent: TestAgent, _ provider: IdentityProviderPeer, flow: String = "device", extra: String = "",
        oidc: Bool = false
    )
        async throws -> CordonClient
    {
        let admin = agent.directory + "/admin"
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try provider.policy(
            flow: flow, domains: [domain, "files.corp.example"], groups: [group], extra: extra, oidc: oidc
        )
        .write(toFile: admin + "/identity.json", atomically: true, encoding: .utf8)
        let client = try await agent.client()
        let status = try await client.reloadPolicy()
        #expect(status.sources.allSatisfy { $0.problems.isEmpty }, "\(status.sources.flatMap(\.problems))")
        try await client.initialize(passcode: "1234")
        try await client.unlock(passcode: "1234")
        return client
    }

    /// Signs in through `client` (joining what an app started) and approves the device code at
    /// the provider as the user would; returns the sign-in's reply.
    static func approveSignIn(_ client: CordonClient, _ provider: IdentityProviderPeer) async throws
        -> IdentitySignInReply
    {
        let (prompts, shown) = AsyncStream<IdentityPrompt>.makeStream()
        async let signedIn = client.signIn(provider: "local") { shown.yield($0) }
        var iterator = prompts.makeAsyncIterator()
        let prompt = try #require(await iterator.next())
        #expect(prompt.verificationURI == provider.base + "/activate")
        try provider.admin("/admin/device", [FormField("user_code", prompt.userCode), FormField("action", "approve")])
        return try await signedIn
    }

    @Test("two apps of a group get the same token from one device sign-in; others are refused")
    func oneSignInForTheGroup() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: Self.configure) { agent in
            let client = try await Self.prepare(agent, provider)
            let mail = try await agent.app("com.example.mail")
            let calendar = try await agent.app("com.example.calendar")
            let outsider = try await agent.app("com.example.games")
            await #expect(throws: CordonError.identityNotInAccessGroup(appId: "com.example.games", domain: Self.domain))
            {
                try await outsider.identity.token(for: Self.domain)
            }
            await #expect(throws: CordonError.identityUnknownDomain(domain: "nowhere.example")) {
                try await mail.identity.token(for: "nowhere.example")
            }
            // Both apps wait on the sign-in the first started; the user approves once.
            async let first = mail.identity.token(for: Self.domain)
            async let second = calendar.identity.token(for: Self.domain)
            let signedIn = try await Self.approveSignIn(client, provider)
            let (a, b) = try await (first, second)
            #expect(a.accessToken == b.accessToken)
            #expect(a.provider == "local" && a.tokenType == "Bearer")
            #expect(signedIn.expiresAt == a.expiresAt)
            #expect(try provider.state().issued == 1, "one sign-in for both apps")
            // A cached token: no new sign-in, the same token.
            #expect(try await mail.identity.token(for: Self.domain).accessToken == a.accessToken)
            #expect(try provider.state().issued == 1)
            // Status shows the sessions, never a token.
            let status = try await client.identityStatus()
            #expect(status.map(\.name) == ["local"])
            #expect(status.first?.sessions.map(\.domain).sorted() == ["files.corp.example", Self.domain])
            let json = String(decoding: try JSONEncoder().encode(status), as: UTF8.self)
            #expect(!json.contains(a.accessToken))
            // Locked: no token.
            try await client.lock()
            await #expect(throws: CordonError.identityLocked(state: "lockedKeyHeld")) {
                try await mail.identity.token(for: Self.domain)
            }
            // Every issue and refusal is audited.
            let records = try await client.audit().filter { $0.category == "identity" }
            #expect(records.contains { $0.appId == "com.example.games" && $0.outcome == "refused" })
            #expect(records.filter { $0.action == "identity.token" && $0.outcome == "allow" }.count >= 3)
            #expect(!records.contains { $0.reason.contains(a.accessToken) })
            await outsider.close()
            await calendar.close()
            await mail.close()
            await client.close()
        }
    }

    /// A due refresh runs beside the valid token (issue #31): the call is answered with the token
    /// it has, and the next one gets what the refresh brought.
    @Test("a due refresh rotates the refresh token; a refused refresh signs in again")
    func refreshRotation() async throws {
        let provider = try IdentityProviderPeer()
        // A 30-second token is always within the 60-second refresh margin; the refresh brings a
        // token of the provider's usual lifetime.
        try provider.admin("/admin/config", [FormField("short_lived", "1")])
        let clock = MovableClock()
        try await withTestAgent(
            settings: .with { $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0 }, policies: true, configure: Self.configure,
            clock: clock.read
        ) { agent in
            let client = try await Self.prepare(agent, provider)
            let mail = try await agent.app("com.example.mail")
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await Self.approveSignIn(client, provider)
            let first = try await signedIn
            try provider.admin("/admin/config", [FormField("short_lived", "0")])
            #expect(try await mail.identity.token(for: Self.domain).accessToken == first.accessToken)
            try await eventually("the refresh beside it is stored") {
                try await client.audit().contains { $0.action == "identity.refresh" && $0.outcome == "allow" }
            }
            let second = try await mail.identity.token(for: Self.domain)
            #expect(second.accessToken != first.accessToken)
            var state = try provider.state()
            #expect(state.issued == 2)
            #expect(state.revoked == ["refresh"], "rotation revoked the old refresh token")
            #expect(state.liveRefreshTokens == 1)
            // The provider refuses the refresh token now, and the token is due again: the call
            // gets it at once, and the refused refresh signs in beside it.
            try provider.admin("/admin/revoke_all")
            clock.advance(by: second.expiresAt - clock.read() - 30)
            #expect(try await mail.identity.token(for: Self.domain).accessToken == second.accessToken)
            try await eventually("the refused refresh") {
                try await client.audit().contains { $0.action == "identity.refresh" && $0.outcome == "refused" }
            }
            // The sign-in it fell back to is the one the user approves.
            _ = try await Self.approveSignIn(client, provider)
            let third = try await mail.identity.token(for: Self.domain)
            #expect(third.accessToken != second.accessToken)
            state = try provider.state()
            #expect(state.issued == 3)
            let records = try await client.audit().filter { $0.category == "identity" }
            #expect(records.filter { $0.action == "identity.refresh" && $0.outcome == "allow" }.count == 1)
            await mail.close()
            await client.close()
        }
    }

    /// Issue #32, item 5: `identity.offlineGraceMinutes` counts minutes without reaching the
    /// provider (the agent's clock, injected and moved by the test). Past the grace with the
    /// provider up, a renewal is tried and its token given (no `SessionExpired`); half-way through
    /// it, the valid token is served and a renewal runs beside it, so the grace starts again;
    /// with the provider down, the grace since the last contact ends in `SessionExpired`.
    @Test("offline grace: counted from the last contact with the provider, renewed before it ends")
    func offlineGraceCountsFromTheLastContact() async throws {
        let provider = try IdentityProviderPeer()
        let clock = MovableClock()
        try await withTestAgent(
            settings: .with { $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0 }, policies: true, configure: Self.configure,
            clock: clock.read
        ) { agent in
            let client = try await Self.prepare(agent, provider, extra: #", "offlineGraceMinutes": 10"#)
            let mail = try await agent.app("com.example.mail")
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await Self.approveSignIn(client, provider)
            let first = try await signedIn
            #expect(try provider.state().issued == 1)
            // Eleven minutes without a call, the access token still good for most of an hour and
            // the provider up: a renewal reaches it, and its token is given.
            clock.advance(by: 11 * 60)
            let renewed = try await mail.identity.token(for: Self.domain)
            #expect(renewed.accessToken != first.accessToken)
            #expect(try provider.state().issued == 2)
            // Six minutes after that contact (past half the grace): the valid token at once, and
            // a renewal beside it.
            clock.advance(by: 6 * 60)
            #expect(try await mail.identity.token(for: Self.domain).accessToken == renewed.accessToken)
            try await eventually("the renewal beside the token is stored") {
                try await client.audit().filter { $0.action == "identity.refresh" && $0.outcome == "allow" }.count == 2
            }
            #expect(try provider.state().issued == 3)
            // Four minutes later: ten since the renewal before, four since the last contact: valid.
            clock.advance(by: 4 * 60)
            let current = try await mail.identity.token(for: Self.domain)
            #expect(current.accessToken != renewed.accessToken)
            #expect(try provider.state().issued == 3, "no contact needed")
            // The provider gone: past the grace since the last contact, the renewal fails and the
            // session is expired; the old token is not given.
            provider.stop()
            clock.advance(by: 11 * 60)
            await #expect(throws: CordonError.sessionExpired(provider: "local")) {
                try await mail.identity.token(for: Self.domain)
            }
            await mail.close()
            await client.close()
        }
    }

    @Test("sign-out revokes at the provider, deletes the sessions, and apps hear DidSignOut")
    func signOut() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: Self.configure) { agent in
            let client = try await Self.prepare(agent, provider)
            let mail = try await agent.app("com.example.mail")
            let events = EventRecorder(mail.events)
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await Self.approveSignIn(client, provider)
            _ = try await signedIn
            let signedOut = try await client.signOut()
            #expect(signedOut == [IdentitySignedOut(provider: "local", sessions: 2, revoked: true)])
            #expect(try provider.state().revoked.sorted() == ["access_token", "refresh_token"])
            try await eventually("DidSignOut") { events.events.contains { $0.kind == .didSignOut } }
            #expect(events.events.first { $0.kind == .didSignOut }?.payload == .didSignOut(provider: "local"))
            #expect(try await client.identityStatus().first?.sessions == [])
            // A sign-in running when the user signs out ends cancelled for whoever waits on it.
            let (prompts, shown) = AsyncStream<IdentityPrompt>.makeStream()
            let waiting = Task { try await mail.identity.token(for: Self.domain) }
            let joined = Task { try await client.signIn(provider: "local") { shown.yield($0) } }
            var iterator = prompts.makeAsyncIterator()
            _ = try #require(await iterator.next())
            #expect(try await client.signOut() == [IdentitySignedOut(provider: "local", sessions: 0, revoked: false)])
            let cancelled = CordonError.signInCancelled(provider: "local", step: "token")
            await #expect(throws: cancelled) { try await waiting.value }
            await #expect(throws: cancelled) { try await joined.value }
            await mail.close()
            await client.close()
        }
    }

    @Test("the loopback code flow: the browser follows the redirect to the one-shot listener")
    func loopbackCodeFlow() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: Self.configure) { agent in
            let client = try await Self.prepare(agent, provider, flow: "authorizationCode")
            let mail = try await agent.app("com.example.mail")
            let token = try await mail.identity.token(for: Self.domain)
            #expect(!token.accessToken.isEmpty)
            #expect(try provider.state().issued == 1)
            // The user refuses in the browser: the flow fails naming the provider and the step.
            _ = try await client.signOut()
            try provider.admin("/admin/config", [FormField("deny_authorization", "1")])
            await #expect(
                throws: CordonError.signInFailed(
                    provider: "local", step: "authorization",
                    reason: "the authorization was denied")
            ) {
                try await mail.identity.token(for: Self.domain)
            }
            await mail.close()
            await client.close()
        }
    }

    @Test("a same-user process without a registration is refused GetToken (python varlink client)")
    func unboundProcessRefused() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: Self.configure) { agent in
            let client = try await Self.prepare(agent, provider)
            let mail = try await agent.app("com.example.mail")
            async let signedIn = mail.identity.token(for: Self.domain)
            _ = try await Self.approveSignIn(client, provider)
            let token = try await signedIn
            // A separate process of the same user speaking varlink itself.
            let script = """
                import json, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(json.dumps({"method": "io.cordon.Identity.GetToken",
                                      "parameters": {"domain": "\(Self.domain)"}}).encode() + b"\\0")
                data = b""
                while not data.endswith(b"\\0"):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                sys.stdout.write(data.rstrip(b"\\0").decode())
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [IdentityProviderPeer.python, "-c", script, agent.socketPath]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let answer = try output.fileHandleForReading.readToEnd() ?? Data()
            process.waitUntilExit()
            let reply = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
            #expect(reply?["error"] as? String == "io.cordon.App.NotRegistered")
            #expect(!String(decoding: answer, as: UTF8.self).contains(token.accessToken))
            await mail.close()
            await client.close()
        }
    }
}

/// The agent's time as a test moves it (Unix seconds, starting now).
final class MovableClock: Sendable {
    private let now = Locked(Date().timeIntervalSince1970)

    /// The clock to give the agent.
    var read: @Sendable () -> Double { { [self] in now.withLock { $0 } } }

    func advance(by seconds: Double) { now.withLock { $0 += seconds } }
}
