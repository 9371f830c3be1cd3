import CordonIdentity
import CordonKit
import CordonProtocol
import CordonServer
import Foundation
import Testing

/// ID tokens through `io.cordon.Identity` against the local authlib provider (docs/ARCHITECTURE.md,
/// "Identity"): the code flow sends a nonce, the agent fetches the provider's JWKS, verifies the ID
/// token with `IDTokenVerifier` before it stores the session, and shows the verified user; a JWKS
/// that does not verify stores nothing; the JWKS is cached and fetched again once on a new `kid`.
@Suite("ID tokens through io.cordon.Identity against the local authlib provider", .serialized)
struct IdentityIDTokenTests {
    static let domain = IdentityComponentTests.domain

    static func jwksFetches(_ provider: IdentityProviderPeer) throws -> Int {
        (try provider.object("/admin/state")["jwks_fetches"] as? NSNumber)?.intValue ?? -1
    }

    @Test("a JWKS that does not verify stores nothing; a verified ID token names the user in Status")
    func verifiedUser() async throws {
        let provider = try IdentityProviderPeer()
        try provider.admin("/admin/config", [FormField("jwks_other", "1")])
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await IdentityComponentTests.prepare(
                agent, provider, flow: "authorizationCode", oidc: true)
            let mail = try await agent.app("com.example.mail")
            // The provider's keys do not verify its ID token: a typed error naming the step, nothing stored.
            await #expect(
                throws: CordonError.signInFailed(
                    provider: "local", step: "idToken",
                    reason:
                        "the ID token is refused: the signature does not verify with the issuer's keys")
            ) {
                try await mail.identity.token(for: Self.domain)
            }
            #expect(try await client.identityStatus().first?.sessions == [])
            #expect(try provider.state().issued == 1, "the provider issued tokens the agent refused to keep")
            // The right keys: verified, stored, the user shown (never a token).
            try provider.admin("/admin/config", [FormField("jwks_other", "0")])
            let token = try await mail.identity.token(for: Self.domain)
            let sessions = try await client.identityStatus().first?.sessions ?? []
            #expect(sessions.map(\.user) == ["alice", "alice"])
            let json = String(decoding: try JSONEncoder().encode(sessions), as: UTF8.self)
            #expect(!json.contains(token.accessToken))
            let records = try await client.audit().filter { $0.category == "identity" }
            #expect(records.contains { $0.action == "identity.signIn" && $0.reason.contains("idToken") })
            #expect(records.contains { $0.action == "identity.idToken" && $0.outcome == "allow" })
            await mail.close()
            await client.close()
        }
    }

    @Test("the JWKS is cached for the agent's life and fetched again once when the provider rotates its key")
    func jwksCacheAndRotation() async throws {
        let provider = try IdentityProviderPeer()
        try await withTestAgent(policies: true, configure: IdentityComponentTests.configure) { agent in
            let client = try await IdentityComponentTests.prepare(
                agent, provider, flow: "authorizationCode", oidc: true)
            let mail = try await agent.app("com.example.mail")
            _ = try await mail.identity.token(for: Self.domain)
            #expect(try Self.jwksFetches(provider) == 1)
            // A second sign-in verifies with the cached keys.
            _ = try await client.signOut()
            _ = try await mail.identity.token(for: Self.domain)
            #expect(try Self.jwksFetches(provider) == 1)
            // The provider signs with a new key (kid idp-2): one more fetch, and it verifies.
            try provider.admin("/admin/config", [FormField("rotated", "1")])
            _ = try await client.signOut()
            _ = try await mail.identity.token(for: Self.domain)
            #expect(try Self.jwksFetches(provider) == 2)
            #expect(try await client.identityStatus().first?.sessions.first?.user == "alice")
            await mail.close()
            await client.close()
        }
    }
}
