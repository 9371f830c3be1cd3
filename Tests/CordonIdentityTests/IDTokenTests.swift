import CordonIdentity
import Foundation
import Testing

/// `IDTokenVerifier` (vapor/jwt-kit) against the ID tokens and the JWKS of the local authlib
/// provider: the one its code grant issues, and ones minted for the test's own clock on its admin
/// endpoint (another key under the issuer's kid, another audience, expired, the HS256 and `none`
/// forgeries).
@Suite("ID token verification against the local authlib provider", .serialized)
struct IDTokenTests {
    /// The test's clock: 2023-11-14T22:13:20Z, with tokens issued then and valid for an hour.
    static let issuedAt = 1_700_000_000
    static let expiresAt = issuedAt + 3600

    func verifier(_ peer: LocalProvider) -> IDTokenVerifier {
        IDTokenVerifier(provider: "local", issuer: peer.base, clientID: "cordon-test")
    }

    func jwks(_ peer: LocalProvider) throws -> [UInt8] {
        let (status, body) = try peer.get("/jwks")
        #expect(status == 200)
        return body
    }

    /// An ID token minted by the provider with `fields` (key, aud, iss, nonce) for the test clock.
    func mint(_ peer: LocalProvider, _ fields: [FormField] = []) throws -> String {
        let object = try peer.adminObject(
            "/admin/id_token",
            [FormField("iat", String(Self.issuedAt)), FormField("exp", String(Self.expiresAt))] + fields)
        return try #require(object["id_token"] as? String)
    }

    /// The refusal of `token` at `now` with `nonce`, or nil when it verified.
    func refusal(
        _ peer: LocalProvider, _ token: String, jwks: [UInt8]? = nil, nonce: String? = nil,
        now: Double = Double(issuedAt + 100)
    ) async throws -> IdentityError? {
        let keys = try jwks ?? self.jwks(peer)
        do throws(IdentityError) {
            _ = try await verifier(peer).verify(token, jwks: keys, nonce: nonce, now: now)
            return nil
        } catch {
            #expect(!Fixtures.text(error).contains(token.split(separator: ".").last.map(String.init) ?? token))
            return error
        }
    }

    @Test("the code grant's ID token verifies with the issuer's JWKS and carries the nonce back")
    func codeGrantIDToken() async throws {
        let peer = try LocalProvider()
        var random = [UInt8](repeating: 0, count: 48)
        for index in random.indices { random[index] = UInt8.random(in: 0...255) }
        var flow = AuthorizationCodeFlow(
            provider: peer.configuration(.authorizationCode), port: 40997, random: random, nonce: "n-0S6_WzA2Mj")
        guard case .openBrowser(let url) = flow.start().first else {
            Issue.record("no browser")
            return
        }
        #expect(url.contains("nonce=n-0S6_WzA2Mj"))
        let location = try peer.browserRedirect(url)
        let target = String(location.dropFirst("http://127.0.0.1:40997".count))
        guard case .send(let exchange) = flow.redirectReceived(target: target).first else {
            Issue.record("redirect refused: \(location)")
            return
        }
        let (status, body) = try await peer.send(exchange)
        guard case .finish(let tokens) = flow.receive(status: status, body: body, now: 0).first else {
            Issue.record("no tokens: \(String(decoding: body, as: UTF8.self))")
            return
        }
        let idToken = try #require(tokens.idToken)
        // authlib stamps the token with the wall clock: the injected clock here is the wall clock.
        let now = Date().timeIntervalSince1970
        let claims = try await verifier(peer).verify(idToken, jwks: try jwks(peer), nonce: "n-0S6_WzA2Mj", now: now)
        #expect(claims.issuer == peer.base)
        #expect(claims.subject == "1")
        #expect(claims.audience == ["cordon-test"])
        #expect(claims.nonce == "n-0S6_WzA2Mj")
        #expect(claims.preferredUsername == "alice")
        #expect(
            try await refusal(peer, idToken, nonce: "another", now: now)
                == .invalidIDToken(provider: "local", reason: "\"nonce\" is not the one sent"))
    }

    @Test("a good token verifies at the injected clock, with the exp leeway")
    func good() async throws {
        let peer = try LocalProvider()
        let token = try mint(peer, [FormField("nonce", "N1")])
        let claims = try await verifier(peer).verify(
            token, jwks: try jwks(peer), nonce: "N1", now: Double(Self.issuedAt + 100))
        #expect(claims.expiresAt == Double(Self.expiresAt))
        #expect(claims.issuedAt == Double(Self.issuedAt))
        #expect(claims.name == "alice")
        #expect(try await refusal(peer, token, now: Double(Self.expiresAt + 30)) == nil)
    }

    @Test("a token signed with another key under the issuer's kid is refused")
    func wrongKey() async throws {
        let peer = try LocalProvider()
        let error = try await refusal(peer, try mint(peer, [FormField("key", "other")]))
        #expect(
            error == .invalidIDToken(provider: "local", reason: "the signature does not verify with the issuer's keys"))
        #expect(error?.step == .idToken)
    }

    @Test("a token for another audience, or for this client and another, is refused")
    func wrongAudience() async throws {
        let peer = try LocalProvider()
        let reason = "\"aud\" is not the client cordon-test alone"
        #expect(
            try await refusal(peer, try mint(peer, [FormField("aud", "someone-else")]))
                == .invalidIDToken(provider: "local", reason: reason))
        #expect(
            try await refusal(
                peer, try mint(peer, [FormField("aud", "cordon-test"), FormField("aud", "someone-else")]))
                == .invalidIDToken(provider: "local", reason: reason))
    }

    @Test("an expired token, one issued in the future, another issuer, a missing nonce are refused")
    func claims() async throws {
        let peer = try LocalProvider()
        let token = try mint(peer)
        #expect(
            try await refusal(peer, token, now: Double(Self.expiresAt + 61))
                == .invalidIDToken(provider: "local", reason: "the ID token has expired"))
        #expect(
            try await refusal(peer, token, now: Double(Self.issuedAt - 120))
                == .invalidIDToken(provider: "local", reason: "the ID token was issued in the future"))
        #expect(
            try await refusal(peer, try mint(peer, [FormField("iss", "https://evil.example")]))
                == .invalidIDToken(provider: "local", reason: "\"iss\" is not the issuer \(peer.base)"))
        #expect(
            try await refusal(peer, token, nonce: "sent")
                == .invalidIDToken(provider: "local", reason: "\"nonce\" is not the one sent"))
    }

    @Test("the HS256 forgery keyed with the public key, an unsigned token and garbage are refused")
    func forgeries() async throws {
        let peer = try LocalProvider()
        for key in ["hs256-public", "none"] {
            let error = try await refusal(peer, try mint(peer, [FormField("key", key)]))
            guard case .invalidIDToken("local", _) = error else {
                Issue.record("\(key) accepted: \(String(describing: error))")
                continue
            }
        }
        #expect(
            try await refusal(peer, "not-a-jwt")
                == .invalidIDToken(provider: "local", reason: "the ID token is not a compact JWS"))
    }

    @Test("a JWKS that is not a key set, is empty, or holds another key does not verify")
    func badJWKS() async throws {
        let peer = try LocalProvider()
        let token = try mint(peer)
        #expect(
            try await refusal(peer, token, jwks: Fixtures.json("<html>"))
                == .invalidIDToken(provider: "local", reason: "the JWKS is not a usable key set"))
        #expect(
            try await refusal(peer, token, jwks: Fixtures.json(#"{"keys":[]}"#))
                == .invalidIDToken(provider: "local", reason: "the JWKS has no key"))
        // Another provider's key set: a fresh provider has its own key under the same kid.
        let other = try LocalProvider()
        #expect(
            try await refusal(peer, token, jwks: try jwks(other))
                == .invalidIDToken(provider: "local", reason: "the signature does not verify with the issuer's keys"))
        // A key set without the token's kid (the provider rotated to idp-2): noMatchingKey, which
        // tells the driver to fetch the set again.
        let rotated = try LocalProvider()
        try await rotated.admin("/admin/config", [FormField("rotated", "1")])
        #expect(
            try await refusal(peer, token, jwks: try jwks(rotated))
                == .invalidIDToken(provider: "local", reason: IDTokenVerifier.noMatchingKey))
    }
}
