import CordonIdentity
import Foundation
import Testing

@Suite("Authorization code with PKCE through a loopback redirect (RFC 8252)")
struct AuthorizationCodeFlowTests {
    /// 32 octets of RFC 7636 Appendix B for the verifier, then 16 for the state.
    static let random = PKCETests.appendixBOctets + Array(repeating: 0xAB, count: 16)
    static let state = Base64URL.encode(Array(repeating: 0xAB, count: 16))

    func started() -> AuthorizationCodeFlow {
        var flow = AuthorizationCodeFlow(
            provider: Fixtures.provider(.authorizationCode), port: 40123, random: Self.random)
        _ = flow.start()
        return flow
    }

    @Test("start opens the authorization URL with the S256 challenge, state and loopback redirect")
    func start() throws {
        var flow = AuthorizationCodeFlow(
            provider: Fixtures.provider(.authorizationCode), port: 40123, random: Self.random)
        let actions = flow.start()
        guard case .openBrowser(let url) = actions.first, actions.count == 1 else {
            Issue.record("no browser: \(actions)")
            return
        }
        let components = try #require(URLComponents(string: url))
        #expect(components.host == "127.0.0.1")
        #expect(components.path == "/authorize")
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["response_type"] == "code")
        #expect(query["redirect_uri"] == "http://127.0.0.1:40123/callback")
        #expect(query["code_challenge"] == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["state"] == Self.state)
        #expect(query["scope"] == "openid profile")
        #expect(!url.contains("dBjftJeZ4CVP"))
    }

    @Test("the redirect's code is exchanged with the verifier; tokens finish the flow")
    func exchange() {
        var flow = started()
        let actions = flow.redirectReceived(target: "/callback?code=CODE-1&state=\(Self.state)")
        guard case .send(let request) = actions.first else {
            Issue.record("no exchange: \(actions)")
            return
        }
        #expect(request.value("grant_type") == "authorization_code")
        #expect(request.value("code") == "CODE-1")
        #expect(request.value("code_verifier") == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(request.value("redirect_uri") == "http://127.0.0.1:40123/callback")
        #expect(!request.description.contains("CODE-1"))
        guard case .finish(let tokens) = flow.receive(status: 200, body: Fixtures.tokens, now: 10).first else {
            Issue.record("not finished")
            return
        }
        #expect(tokens.refreshToken == "RT-1")
    }

    @Test(
        "a wrong or missing state is refused before the code is believed",
        arguments: ["/callback?code=C&state=forged", "/callback?code=C", "/callback?error=access_denied&state=x"])
    func wrongState(target: String) {
        var flow = started()
        #expect(flow.redirectReceived(target: target) == [.fail(.stateMismatch(provider: "corp"))])
        #expect(flow.phase == .finished)
    }

    @Test("access_denied, a missing code, another path: typed errors at the authorization step")
    func refusals() {
        var denied = started()
        #expect(
            denied.redirectReceived(target: "/callback?error=access_denied&state=\(Self.state)")
                == [.fail(.denied(provider: "corp", step: .authorization))])
        var noCode = started()
        guard
            case .fail(.malformedResponse(_, .authorization, _)) = noCode.redirectReceived(
                target: "/callback?state=\(Self.state)"
            ).first
        else {
            Issue.record("no code accepted")
            return
        }
        var elsewhere = started()
        guard
            case .fail(.malformedResponse(_, .authorization, _)) = elsewhere.redirectReceived(
                target: "/other?code=C&state=\(Self.state)"
            ).first
        else {
            Issue.record("another path accepted")
            return
        }
    }

    @Test("a token error after the exchange is typed and holds neither code nor verifier")
    func tokenError() {
        var flow = started()
        _ = flow.redirectReceived(target: "/callback?code=CODE-SECRET&state=\(Self.state)")
        let actions = flow.receive(status: 400, body: Fixtures.json(#"{"error":"invalid_grant"}"#), now: 1)
        guard case .fail(let error) = actions.first else {
            Issue.record("accepted")
            return
        }
        #expect(
            error
                == .providerError(provider: "corp", step: .token, error: "invalid_grant", description: nil, status: 400)
        )
        #expect(!Fixtures.text(error).contains("CODE-SECRET"))
        #expect(!Fixtures.text(error).contains("dBjftJeZ4CVP"))
    }
}
