import CordonIdentity
import Foundation
import Testing

/// The state machines against a real OAuth 2.0 server (authlib + Flask on 127.0.0.1): the driver
/// here is the test, sending what each action asks at once (the waits of `sendAfter` are the
/// agent's; the tests never sleep).
@Suite("CordonIdentity against the local authlib provider", .serialized)
struct ProviderPeerTests {
    /// Runs `actions` (and the answers they lead to) until the grant finishes or shows a user code;
    /// returns the prompt shown and the final action.
    func drive(_ grant: inout DeviceGrant, _ actions: [SignInAction], provider: LocalProvider, now: Double)
        async throws -> (prompt: DeviceCodePrompt?, last: SignInAction?)
    {
        var prompt: DeviceCodePrompt?
        for action in actions {
            switch action {
            case .send(let request), .sendAfter(_, let request):
                let (status, body) = try await provider.send(request)
                let next = grant.receive(status: status, body: body, now: now)
                if case .showUserCode(let shown) = next.first {
                    prompt = shown
                    return (prompt, next.last)
                }
                return (prompt, next.first)
            case .showUserCode(let shown): prompt = shown
            default: return (prompt, action)
            }
        }
        return (prompt, nil)
    }

    /// Starts a device grant and returns it with its prompt and the first poll.
    func started(_ provider: LocalProvider) async throws -> (DeviceGrant, DeviceCodePrompt, ProviderRequest) {
        var grant = DeviceGrant(provider: provider.configuration(.device))
        let (prompt, next) = try await drive(&grant, grant.start(), provider: provider, now: 0)
        let shown = try #require(prompt)
        guard case .sendAfter(let seconds, let poll) = next else { throw LocalProviderError.admin("no poll", 0) }
        #expect(seconds == 5)
        return (grant, shown, poll)
    }

    @Test("device grant: pending, slow_down, then approved by the user")
    func deviceApproved() async throws {
        let provider = try LocalProvider()
        var (grant, prompt, poll) = try await started(provider)
        #expect(prompt.verificationURI == provider.base + "/activate")
        #expect(prompt.userCode.count == 9)
        var (status, body) = try await provider.send(poll)
        guard case .sendAfter(5, let again) = grant.receive(status: status, body: body, now: 5).first else {
            Issue.record("pending did not poll again")
            return
        }
        try await provider.admin("/admin/config", [FormField("slow_down", "1")])
        (status, body) = try await provider.send(again)
        guard case .sendAfter(10, let slower) = grant.receive(status: status, body: body, now: 10).first else {
            Issue.record("slow_down did not add 5 s")
            return
        }
        try await provider.admin("/admin/config", [FormField("slow_down", "0")])
        try await provider.admin(
            "/admin/device", [FormField("user_code", prompt.userCode), FormField("action", "approve")])
        (status, body) = try await provider.send(slower)
        guard case .finish(let tokens) = grant.receive(status: status, body: body, now: 20).first else {
            Issue.record("approval did not finish")
            return
        }
        #expect(!tokens.accessToken.isEmpty)
        #expect(tokens.refreshToken != nil)
        #expect(tokens.expiresAt == 20 + 3600)
    }

    @Test("device grant: the user denies, or the code expires")
    func deviceDeniedAndExpired() async throws {
        let provider = try LocalProvider()
        var (denied, deniedPrompt, deniedPoll) = try await started(provider)
        try await provider.admin(
            "/admin/device", [FormField("user_code", deniedPrompt.userCode), FormField("action", "deny")])
        let (status, body) = try await provider.send(deniedPoll)
        #expect(denied.receive(status: status, body: body, now: 5) == [.fail(.denied(provider: "local", step: .token))])
        var (expired, expiredPrompt, expiredPoll) = try await started(provider)
        try await provider.admin(
            "/admin/device", [FormField("user_code", expiredPrompt.userCode), FormField("action", "expire")])
        let (status2, body2) = try await provider.send(expiredPoll)
        #expect(
            expired.receive(status: status2, body: body2, now: 5) == [.fail(.expired(provider: "local", step: .token))])
    }

    @Test("authorization code + PKCE through the browser stand-in, then rotation and revocation")
    func codeFlowRefreshAndRevocation() async throws {
        let provider = try LocalProvider()
        let configuration = provider.configuration(.authorizationCode)
        var random = [UInt8](repeating: 0, count: 48)
        for index in random.indices { random[index] = UInt8.random(in: 0...255) }
        var flow = AuthorizationCodeFlow(provider: configuration, port: 40999, random: random)
        guard case .openBrowser(let url) = flow.start().first else {
            Issue.record("no browser")
            return
        }
        let location = try provider.browserRedirect(url)
        #expect(location.hasPrefix("http://127.0.0.1:40999/callback?"))
        let target = String(location.dropFirst("http://127.0.0.1:40999".count))
        guard case .send(let exchange) = flow.redirectReceived(target: target).first else {
            Issue.record("the redirect was refused: \(target)")
            return
        }
        let (status, body) = try await provider.send(exchange)
        guard case .finish(let first) = flow.receive(status: status, body: body, now: 100).first else {
            Issue.record("the exchange failed: \(String(decoding: body, as: UTF8.self))")
            return
        }
        let oldRefresh = try #require(first.refreshToken)
        // A silent refresh rotates the refresh token; the old one is refused afterwards.
        let (refreshStatus, refreshBody) = try await provider.send(configuration.refreshRequest(oldRefresh))
        let second = try configuration.refreshed(first, status: refreshStatus, body: refreshBody, now: 200)
        #expect(second.accessToken != first.accessToken)
        #expect(second.refreshToken != nil && second.refreshToken != oldRefresh)
        #expect(second.expiresAt == 200 + 3600)
        let (replayStatus, replayBody) = try await provider.send(configuration.refreshRequest(oldRefresh))
        #expect(throws: IdentityError.refreshRefused(provider: "local")) {
            try configuration.refreshed(first, status: replayStatus, body: replayBody, now: 300)
        }
        // Revocation at sign-out (RFC 7009): the refresh token is dead at the provider.
        let newRefresh = try #require(second.refreshToken)
        let revocation = try #require(configuration.revocationRequest(newRefresh, hint: "refresh_token"))
        #expect(try await provider.send(revocation).status == 200)
        let (deadStatus, deadBody) = try await provider.send(configuration.refreshRequest(newRefresh))
        #expect(throws: IdentityError.refreshRefused(provider: "local")) {
            try configuration.refreshed(second, status: deadStatus, body: deadBody, now: 400)
        }
        #expect(try await provider.state()["revoked"] == .strings(["refresh", "refresh_token"]))
    }

    @Test("a forged state, a wrong verifier, a malformed body and a token without expires_in are typed errors")
    func badAnswers() async throws {
        let provider = try LocalProvider()
        let configuration = provider.configuration(.authorizationCode)
        var flow = AuthorizationCodeFlow(provider: configuration, port: 40998, random: [UInt8](repeating: 1, count: 48))
        guard case .openBrowser(let url) = flow.start().first else { return }
        let location = try provider.browserRedirect(url)
        let forged = location.replacingOccurrences(of: "state=", with: "state=x")
        #expect(
            flow.redirectReceived(target: String(forged.dropFirst("http://127.0.0.1:40998".count)))
                == [.fail(.stateMismatch(provider: "local"))])
        // A code exchanged with another verifier is refused by the provider (PKCE).
        var other = AuthorizationCodeFlow(
            provider: configuration, port: 40998, random: [UInt8](repeating: 2, count: 48))
        guard case .openBrowser(let otherURL) = other.start().first else { return }
        let stolen = try provider.browserRedirect(otherURL)
        var thief = AuthorizationCodeFlow(
            provider: configuration, port: 40998, random: [UInt8](repeating: 3, count: 48))
        _ = thief.start()
        let code = try #require(URLComponents(string: stolen)?.queryItems?.first { $0.name == "code" }?.value)
        let thiefState = Base64URL.encode([UInt8](repeating: 3, count: 16))
        guard
            case .send(let exchange) = thief.redirectReceived(target: "/callback?code=\(code)&state=\(thiefState)")
                .first
        else { return }
        let (status, body) = try await provider.send(exchange)
        guard
            case .fail(.providerError("local", .token, "invalid_grant", _, _)) = thief.receive(
                status: status, body: body, now: 1
            ).first
        else {
            Issue.record("a code with the wrong verifier was accepted")
            return
        }
        // Malformed JSON and a token without expires_in from the token endpoint.
        for setting in ["malformed", "omit_expires_in"] {
            var grant = DeviceGrant(provider: provider.configuration(.device))
            let (prompt, next) = try await drive(&grant, grant.start(), provider: provider, now: 0)
            try await provider.admin(
                "/admin/device",
                [FormField("user_code", try #require(prompt).userCode), FormField("action", "approve")])
            try await provider.admin("/admin/config", [FormField(setting, "1")])
            guard case .sendAfter(_, let poll) = next else { return }
            let (status, body) = try await provider.send(poll)
            let result = grant.receive(status: status, body: body, now: 5)
            guard case .fail(.malformedResponse("local", .token, let reason)) = result.first else {
                Issue.record("\(setting) accepted: \(result)")
                return
            }
            #expect(reason.contains(setting == "malformed" ? "not a JSON object" : "expires_in"))
            try await provider.admin("/admin/config", [FormField(setting, "0")])
        }
    }
}
