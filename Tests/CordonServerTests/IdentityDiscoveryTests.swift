import CordonIdentity
import CordonKit
import CordonProtocol
import CordonServer
import Foundation
import Testing

/// OpenID Connect Discovery through `io.cordon.Identity` against the local authlib provider
/// (docs/ARCHITECTURE.md, "Identity"; docs/THREAT-MODEL.md, "Identity"): a provider the policy
/// names only by its issuer signs in with the endpoints and JWKS its discovery document gives,
/// fetched once for every waiting call; a document naming another issuer (or otherwise bad) is
/// refused with a typed error at step `discovery` and nothing is stored; explicit endpoints
/// override the discovered ones.
@Suite("OpenID Connect Discovery through io.cordon.Identity against the local authlib provider", .serialized)
struct IdentityDiscoveryTests {
    static let domain = IdentityComponentTests.domain

    /// An admin policy naming the provider by its issuer, with only the `endpoints` given (none
    /// when empty), the device flow and the `openid` scope.
    static func policy(_ provider: IdentityProviderPeer, endpoints: String = "") -> String {
        let group = IdentityComponentTests.group
        let quoted = { (items: [String]) in "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return """
            {"schema": "cordon.policy.v1", "identity": {
              "providers": [{"name": "local", "issuer": "\(provider.base)", \(endpoints.isEmpty ? "" : "\"endpoints\": {\(endpoints)}, ")
                "clientId": "cordon-test", "scopes": ["openid"], "flow": "device"}],
              "domains": [{"domain": "\(domain)", "provider": "local"}],
              "accessGroups": [{"name": "\(group.0)", "apps": \(quoted(group.1)), "domains": \(quoted(group.2))}]
            }}
            """
    }

    /// `policy` in force, the container initialised and unlocked.
    static func prepare(_ agent: TestAgent, _ policy: String) async throws -> CordonClient {
        let admin = agent.directory + "/admin"
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try policy.write(toFile: admin + "/identity.json", atomically: true, encoding: .utf8)
        let client = try await agent.client()
        let status = try await client.reloadPolicy()
        #expect(status.sources.allSatisfy { $0.problems.isEmpty }, "\(status.sources.flatMap(\.problems))")
        try await client.initialize(passcode: "1234")
        try await client.unlock(passcode: "1234")
        return client
    }

    static func count(_ provider: IdentityProviderPeer, _ key: String) throws -> Int {
        (try provider.object("/admin/state")[key] as? NSNumber)?.intValue ?? -1
    }

    @Test("issuer and client id only: one discovery for every waiting call, the device grant, the ID token verified")
    func issuerOnly() async throws {
        let provider = try IdentityProviderPeer()
        try provider.admin("/admin/config", [FormField("device_id_token", "1")])
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await Self.prepare(agent, Self.policy(provider))
            let mail = try await agent.app("com.example.mail")
            let calendar = try await agent.app("com.example.calendar")
            // Nothing is fetched before a sign-in needs it: Status shows no endpoint yet.
            #expect(try await client.identityStatus().first?.endpoints == IdentityEndpoints())
            #expect(try Self.count(provider, "discovery_fetches") == 0)
            // Both apps and the sign-in wait on one flight, which fetched the document once.
            async let first = mail.identity.token(for: Self.domain)
            async let second = calendar.identity.token(for: Self.domain)
            _ = try await IdentityComponentTests.approveSignIn(client, provider)
            let (a, b) = try await (first, second)
            #expect(a.accessToken == b.accessToken && a.provider == "local")
            #expect(try Self.count(provider, "discovery_fetches") == 1)
            // The device grant's ID token verified with the JWKS the document named.
            #expect(try Self.count(provider, "jwks_fetches") == 1)
            let status = try #require(try await client.identityStatus().first)
            #expect(status.sessions.map(\.user) == ["alice"])
            #expect(
                status.endpoints
                    == IdentityEndpoints(
                        deviceAuthorization: provider.base + "/device_authorization",
                        authorization: provider.base + "/authorize", token: provider.base + "/token",
                        revocation: provider.base + "/revoke", jwks: provider.base + "/jwks",
                        discovery: provider.base + "/.well-known/openid-configuration"))
            let records = try await client.audit().filter { $0.category == "identity" }
            #expect(records.contains { $0.action == "identity.discovery" && $0.outcome == "allow" })
            #expect(records.contains { $0.action == "identity.idToken" && $0.outcome == "allow" })
            // Cached for the agent's life: a sign-out (revoking at the discovered endpoint) and a
            // new sign-in fetch nothing again.
            let signedOut = try await client.signOut()
            #expect(signedOut == [IdentitySignedOut(provider: "local", sessions: 1, revoked: true)])
            #expect(try provider.state().revoked.sorted() == ["access_token", "refresh_token"])
            async let again = mail.identity.token(for: Self.domain)
            _ = try await IdentityComponentTests.approveSignIn(client, provider)
            _ = try await again
            #expect(try Self.count(provider, "discovery_fetches") == 1)
            await mail.close()
            await calendar.close()
            await client.close()
        }
    }

    @Test("a document naming another issuer, or bad, is refused at step discovery and nothing is stored")
    func refusedDocuments() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await Self.prepare(agent, Self.policy(provider))
            let mail = try await agent.app("com.example.mail")
            let refusals: [(String, String)] = [
                (
                    "discovery_wrong_issuer",
                    "the document's /issuer is \"https://idp.attacker.example\", not the configured \"\(provider.base)\""
                ),
                (
                    "discovery_malformed",
                    "the response is malformed: the discovery document is not a JSON object"
                ),
                (
                    "discovery_insecure",
                    "/token_endpoint: http://idp.example/token is not https and its host is not loopback"
                ),
                (
                    "discovery_no_token",
                    "the response is malformed: /token_endpoint is missing and the policy does not give the endpoint"
                ),
            ]
            for (fetches, (flag, reason)) in refusals.enumerated() {
                try provider.admin("/admin/config", [FormField(flag, "1")])
                await #expect(throws: CordonError.signInFailed(provider: "local", step: "discovery", reason: reason)) {
                    try await mail.identity.token(for: Self.domain)
                }
                // A refused document is not kept: each call fetched it again.
                #expect(try Self.count(provider, "discovery_fetches") == fetches + 1)
                try provider.admin("/admin/config", [FormField(flag, "0")])
            }
            #expect(try await client.identityStatus().first?.sessions == [])
            #expect(try provider.state().issued == 0, "no token was asked for")
            let records = try await client.audit().filter { $0.action == "identity.discovery" }
            #expect(records.count == refusals.count && records.allSatisfy { $0.outcome == "failed" })
            await mail.close()
            await client.close()
        }
    }

    @Test("explicit endpoints override the discovered ones")
    func explicitEndpointsOverride() async throws {
        let provider = try IdentityProviderPeer()
        // The document names device and token endpoints that answer 404.
        try provider.admin("/admin/config", [FormField("discovery_moved", "1"), FormField("device_id_token", "1")])
        let endpoints =
            #""deviceAuthorization": "\#(provider.base)/device_authorization", "token": "\#(provider.base)/token""#
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await Self.prepare(agent, Self.policy(provider, endpoints: endpoints))
            let mail = try await agent.app("com.example.mail")
            async let token = mail.identity.token(for: Self.domain)
            _ = try await IdentityComponentTests.approveSignIn(client, provider)
            _ = try await token
            // Discovered for the JWKS (the policy gives none): the ID token verified with it.
            #expect(try Self.count(provider, "discovery_fetches") == 1)
            let status = try #require(try await client.identityStatus().first)
            #expect(status.sessions.map(\.user) == ["alice"])
            // The policy's endpoints are the ones in use, not the document's /moved ones.
            #expect(status.endpoints?.deviceAuthorization == provider.base + "/device_authorization")
            #expect(status.endpoints?.token == provider.base + "/token")
            #expect(status.endpoints?.jwks == provider.base + "/jwks")
            #expect(status.endpoints?.discovery == provider.base + "/.well-known/openid-configuration")
            await mail.close()
            await client.close()
        }
    }
}
