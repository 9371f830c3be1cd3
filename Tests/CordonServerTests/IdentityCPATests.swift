import CordonIdentity
import CordonKit
import CordonPolicy
import CordonProtocol
import CordonServer
import Foundation
import Testing

/// `io.cordon.Identity` with a CPA 1.0 provider (ETSI TS 103 407) over the agent's socket against
/// the Flask CPA peer (`Tests/CordonIdentityTests/peers/cpa_server.py`; docs/ARCHITECTURE.md,
/// "Identity"): a user token for every app of a group from one pairing, single sign-on to the
/// provider's other domain, the client credentials stored sealed and renewing tokens, a denied
/// pairing, and sign-out deleting the credentials.
@Suite("io.cordon.Identity against the local CPA provider", .serialized)
struct IdentityCPATests {
    static let ebu = "cpa.ebu.ch"
    static let rts = "cpa.rts.ch"
    static let apps = ["com.example.player", "com.example.guide"]

    /// The CPA provider in force (`mode` as given), the container initialised and unlocked.
    static func prepare(_ agent: TestAgent, _ peer: IdentityProviderPeer, mode: String) async throws -> CordonClient {
        let admin = agent.directory + "/admin"
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        let policy = """
            {"schema": "cordon.policy.v1", "identity": {
              "cpaProviders": [{"name": "ebu", "baseURL": "\(peer.base)", "domains": ["\(ebu)", "\(rts)"],
                                "mode": "\(mode)"}],
              "accessGroups": [{"name": "tv", "apps": ["\(apps[0])", "\(apps[1])"], "domains": ["\(ebu)", "\(rts)"]}]
            }}
            """
        try policy.write(toFile: admin + "/identity.json", atomically: true, encoding: .utf8)
        let client = try await agent.client()
        let status = try await client.reloadPolicy()
        #expect(status.sources.allSatisfy { $0.problems.isEmpty }, "\(status.sources.flatMap(\.problems))")
        try await client.initialize(passcode: "1234")
        try await client.unlock(passcode: "1234")
        return client
    }

    /// The peer's `/admin/state` counters.
    static func state(_ peer: IdentityProviderPeer) throws -> [String: Int] {
        try peer.object("/admin/state").compactMapValues { ($0 as? NSNumber)?.intValue }
    }

    /// Joins the sign-in through `client` and answers the pairing at the provider with `action`
    /// as the user would; returns the prompt the user saw and the sign-in's outcome.
    static func pair(_ client: CordonClient, _ peer: IdentityProviderPeer, action: String) async throws
        -> (IdentityPrompt, Result<IdentitySignInReply, any Error>)
    {
        let (prompts, shown) = AsyncStream<IdentityPrompt>.makeStream()
        let signIn = Task { try await client.signIn(provider: "ebu") { shown.yield($0) } }
        var iterator = prompts.makeAsyncIterator()
        let prompt = try #require(await iterator.next())
        try peer.admin(
            "/admin/pair",
            [FormField("user_code", prompt.userCode), FormField("action", action), FormField("user_name", "james")])
        return (prompt, await signIn.result)
    }

    @Test("two apps of a group get one CPA user token from one pairing; the other domain by single sign-on")
    func userTokenForTheGroup() async throws {
        let peer = try IdentityProviderPeer(script: "cpa_server.py")
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await Self.prepare(agent, peer, mode: "user")
            let player = try await agent.app(Self.apps[0])
            let guide = try await agent.app(Self.apps[1])
            let outsider = try await agent.app("com.example.games")
            await #expect(throws: CordonError.identityNotInAccessGroup(appId: "com.example.games", domain: Self.ebu)) {
                try await outsider.identity.token(for: Self.ebu)
            }
            // Both apps wait on the one sign-in; the user pairs the device once.
            async let first = player.identity.token(for: Self.ebu)
            async let second = guide.identity.token(for: Self.ebu)
            let (prompt, signedIn) = try await Self.pair(client, peer, action: "approve")
            #expect(prompt.verificationURI == peer.base + "/verify")
            #expect(prompt.userCode.count == 8)
            let (a, b) = try await (first, second)
            #expect(a.accessToken == b.accessToken)
            #expect(a.provider == "ebu" && a.domain == Self.ebu)
            #expect(try signedIn.get().expiresAt == a.expiresAt)
            var state = try Self.state(peer)
            #expect(state["clients"] == 1 && state["paired_clients"] == 1 && state["issued"] == 1)
            // The other domain: the stored client credentials get a user token, no new pairing.
            let other = try await guide.identity.token(for: Self.rts)
            #expect(other.domain == Self.rts && other.accessToken != a.accessToken)
            state = try Self.state(peer)
            #expect(state["clients"] == 1 && state["pairings"] == 0 && state["issued"] == 2)
            // Cached: no request.
            #expect(try await player.identity.token(for: Self.rts).accessToken == other.accessToken)
            #expect(try Self.state(peer)["issued"] == 2)
            // Status: the user and domain names, never a token.
            let status = try await client.identityStatus()
            #expect(status.map(\.name) == ["ebu"] && status.first?.flow == "cpaUser")
            let sessions = status.first?.sessions ?? []
            #expect(sessions.map(\.domain) == [Self.ebu, Self.rts])
            #expect(sessions.map(\.user) == ["james", "james"])
            #expect(sessions.map(\.domainDisplayName) == ["EBU - CPA demo", "RTS - HbbTV demo"])
            let json = String(decoding: try JSONEncoder().encode(status), as: UTF8.self)
            #expect(!json.contains(a.accessToken) && !json.contains(other.accessToken))
            // Sign-out deletes the sessions and the client credentials: the next token registers anew.
            #expect(
                try await client.signOut() == [
                    IdentitySignedOut(
                        provider: "ebu", sessions: 2, revoked: false, revocationProblem: "CPA 1.0 has no revocation")
                ])
            async let again = player.identity.token(for: Self.ebu)
            let (_, repaired) = try await Self.pair(client, peer, action: "approve")
            _ = try repaired.get()
            #expect(try await again.domain == Self.ebu)
            #expect(try Self.state(peer)["clients"] == 2)
            let records = try await client.audit().filter { $0.category == "identity" }
            #expect(records.contains { $0.appId == "com.example.games" && $0.outcome == "refused" })
            #expect(!records.contains { $0.reason.contains(a.accessToken) })
            await outsider.close()
            await guide.close()
            await player.close()
            await client.close()
        }
    }

    @Test("a denied pairing fails naming the provider and step; the registration is kept")
    func deniedPairing() async throws {
        let peer = try IdentityProviderPeer(script: "cpa_server.py")
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await Self.prepare(agent, peer, mode: "user")
            let player = try await agent.app(Self.apps[0])
            let waiting = Task { try await player.identity.token(for: Self.ebu) }
            let (_, signedIn) = try await Self.pair(client, peer, action: "deny")
            let denied = CordonError.signInFailed(
                provider: "ebu", step: "token", reason: "the authorization was denied")
            #expect(throws: denied) { try signedIn.get() }
            await #expect(throws: denied) { try await waiting.value }
            #expect(try await client.identityStatus().first?.sessions == [])
            // The device keeps its registration: the next sign-in associates without registering.
            let again = Task { try await player.identity.token(for: Self.ebu) }
            let (_, approved) = try await Self.pair(client, peer, action: "approve")
            _ = try approved.get()
            _ = try await again.value
            #expect(try Self.state(peer)["clients"] == 1)
            await player.close()
            await client.close()
        }
    }

    /// A due renewal runs beside the valid token (issue #31): the call is answered with the token
    /// it has, and the next one gets what the renewal brought.
    @Test("client mode: an anonymous token, renewed with the stored client credentials")
    func clientTokenRenewal() async throws {
        let peer = try IdentityProviderPeer(script: "cpa_server.py")
        // A 30-second token is always within the 60-second renewal margin; the renewal brings a
        // token of the provider's usual lifetime.
        try peer.admin("/admin/config", [FormField("short_lived", "1")])
        let clock = MovableClock()
        try await withTestAgent(
            settings: .with { $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0 }, policies: true,
            configure: IdentityComponentTests.configure, clock: clock.read
        ) { agent in
            let client = try await Self.prepare(agent, peer, mode: "client")
            let player = try await agent.app(Self.apps[0])
            let first = try await player.identity.token(for: Self.ebu)
            try peer.admin("/admin/config", [FormField("short_lived", "0")])
            #expect(try await player.identity.token(for: Self.ebu).accessToken == first.accessToken)
            try await eventually("the renewal beside it is stored") {
                try await client.audit().contains { $0.action == "identity.refresh" && $0.outcome == "allow" }
            }
            let second = try await player.identity.token(for: Self.ebu)
            #expect(first.accessToken != second.accessToken)
            let state = try Self.state(peer)
            #expect(state["clients"] == 1 && state["issued"] == 2 && state["paired_clients"] == 0)
            let status = try await client.identityStatus()
            #expect(status.first?.flow == "cpaClient")
            #expect(status.first?.sessions.map(\.user) == [nil])
            // The provider failing, the token due again: it stays in use, and the failed renewal
            // holds the next back.
            try peer.admin("/admin/config", [FormField("fail", "1")])
            clock.advance(by: second.expiresAt - clock.read() - 30)
            #expect(try await player.identity.token(for: Self.ebu).accessToken == second.accessToken)
            try await eventually("the failed renewal") {
                try await client.audit().contains { $0.action == "identity.refresh" && $0.outcome == "failed" }
            }
            #expect(try await player.identity.token(for: Self.ebu).accessToken == second.accessToken)
            #expect(
                try await client.audit().filter { $0.action == "identity.refresh" && $0.outcome == "failed" }.count == 1
            )
            await player.close()
            await client.close()
        }
    }
}
