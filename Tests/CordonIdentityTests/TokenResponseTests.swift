import CordonIdentity
import Testing

@Suite("Token responses (RFC 6749 §5)")
struct TokenResponseTests {
    func parse(_ body: String, status: Int = 200) throws(IdentityError) -> TokenAnswer {
        try TokenResponseParser.parse(
            status: status, body: Fixtures.json(body), provider: "corp", step: .token, now: 1000)
    }

    @Test("a token response gives the tokens, expiring expires_in after now")
    func tokens() throws {
        let answer = try parse(String(decoding: Fixtures.tokens, as: UTF8.self))
        guard case .tokens(let tokens) = answer else {
            Issue.record("no tokens: \(answer)")
            return
        }
        #expect(tokens.accessToken == "AT-1")
        #expect(tokens.refreshToken == "RT-1")
        #expect(tokens.expiresAt == 4600)
        #expect(tokens.tokenType == "Bearer")
    }

    @Test("an error response gives its code and description")
    func oauthError() throws {
        let answer = try parse(#"{"error":"authorization_pending","error_description":"wait"}"#, status: 400)
        #expect(answer == .error(code: "authorization_pending", description: "wait"))
    }

    @Test("no expires_in is a typed error naming the provider and the step, never the token")
    func missingExpiry() {
        #expect(
            throws: IdentityError.malformedResponse(
                provider: "corp", step: .token, reason: "the token has no \"expires_in\"")
        ) {
            try parse(#"{"access_token":"SECRET-AT","token_type":"Bearer","refresh_token":"SECRET-RT"}"#)
        }
    }

    @Test(
        "malformed bodies are typed errors that hold no part of the body",
        arguments: [
            "not json", "[1]", #"{"access_token":"SECRET","token_type":"Bearer","expires_in":"3600"}"#,
            #"{"access_token":"SECRET","token_type":"Bearer","expires_in":true}"#,
            #"{"access_token":"SECRET","token_type":"mac","expires_in":60}"#,
            #"{"access_token":"SECRET","token_type":"Bearer","expires_in":0}"#,
            #"{"access_token":7,"token_type":"Bearer","expires_in":60}"#, #"{"error":5}"#,
        ])
    func malformed(body: String) {
        do {
            let answer = try parse(body)
            Issue.record("accepted: \(answer)")
        } catch {
            #expect(error.provider == "corp")
            #expect(error.step == .token)
            #expect(!Fixtures.text(error).contains("SECRET"))
        }
    }

    @Test("a success status without tokens or an error status without error member is malformed")
    func statusWithoutError() {
        #expect(throws: IdentityError.self) { try parse(#"{}"#, status: 500) }
        #expect(throws: IdentityError.self) { try parse(#"{"token_type":"Bearer","expires_in":60}"#) }
    }

    @Test("a server error without an error member, JSON or not, is serverError with its status")
    func serverError() {
        for body in [#"{}"#, "<html>Bad Gateway</html>", ""] {
            #expect(throws: IdentityError.serverError(provider: "corp", step: .token, status: 502)) {
                try parse(body, status: 502)
            }
        }
        #expect(
            throws: IdentityError.malformedResponse(
                provider: "corp", step: .token, reason: "the body is not a JSON object")
        ) {
            try parse("<html>", status: 400)
        }
    }

    @Test("a body over 64 KiB is refused before it is parsed")
    func oversized() {
        let body = "{\"pad\":\"" + String(repeating: "x", count: 70_000) + "\"}"
        #expect(
            throws: IdentityError.malformedResponse(provider: "corp", step: .token, reason: "the body is over 64 KiB")
        ) {
            try parse(body)
        }
    }

    @Test("a refresh rotates the refresh token; without a new one the old one stays")
    func rotation() throws {
        let provider = Fixtures.provider()
        let old = TokenSet(
            accessToken: "AT-1", tokenType: "Bearer", expiresAt: 100, refreshToken: "RT-1", scope: nil, idToken: "ID")
        let rotated = try provider.refreshed(
            old, status: 200,
            body: Fixtures.json(
                #"{"access_token":"AT-2","token_type":"bearer","expires_in":60,"refresh_token":"RT-2"}"#),
            now: 500)
        #expect(rotated.accessToken == "AT-2")
        #expect(rotated.refreshToken == "RT-2")
        #expect(rotated.expiresAt == 560)
        #expect(rotated.idToken == "ID")
        let kept = try provider.refreshed(
            old, status: 200, body: Fixtures.json(#"{"access_token":"AT-3","token_type":"Bearer","expires_in":60}"#),
            now: 500)
        #expect(kept.refreshToken == "RT-1")
    }

    @Test("a refused refresh (invalid_grant) asks for a sign-in; the request names no secret")
    func refusedRefresh() {
        let provider = Fixtures.provider()
        let old = TokenSet(
            accessToken: "AT-1", tokenType: "Bearer", expiresAt: 100, refreshToken: "RT-1", scope: nil, idToken: nil)
        #expect(throws: IdentityError.refreshRefused(provider: "corp")) {
            try provider.refreshed(old, status: 400, body: Fixtures.json(#"{"error":"invalid_grant"}"#), now: 1)
        }
        let request = provider.refreshRequest("RT-SECRET")
        #expect(request.value("refresh_token") == "RT-SECRET")
        #expect(request.value("grant_type") == "refresh_token")
        #expect(!request.description.contains("RT-SECRET"))
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "grant_type=refresh_token&refresh_token=RT-SECRET&client_id=cordon-test")
    }

    @Test("revocation follows RFC 7009 and needs an endpoint")
    func revocation() {
        var provider = Fixtures.provider()
        let request = provider.revocationRequest("RT-1", hint: "refresh_token")
        #expect(request?.url == "http://127.0.0.1:8000/revoke")
        #expect(request?.value("token_type_hint") == "refresh_token")
        provider.revocationEndpoint = nil
        #expect(provider.revocationRequest("RT-1", hint: "refresh_token") == nil)
    }
}
