import CordonIdentity
import Testing

@Suite("Device authorization grant (RFC 8628)")
struct DeviceGrantTests {
    static let deviceCode = Fixtures.json(
        #"{"device_code":"DC-SECRET","user_code":"WDJB-MJHT","verification_uri":"http://127.0.0.1:8000/activate","expires_in":600,"interval":5}"#
    )

    /// A grant past its device authorization answer, at t=0.
    func polling() -> DeviceGrant {
        var grant = DeviceGrant(provider: Fixtures.provider())
        _ = grant.start()
        _ = grant.receive(status: 200, body: Self.deviceCode, now: 0)
        return grant
    }

    @Test("start asks for a device code; the answer shows the user code and polls after the interval")
    func start() throws {
        var grant = DeviceGrant(provider: Fixtures.provider())
        let first = grant.start()
        guard case .send(let request) = first.first, first.count == 1 else {
            Issue.record("not one request: \(first)")
            return
        }
        #expect(request.url == "http://127.0.0.1:8000/device")
        #expect(request.value("client_id") == "cordon-test")
        #expect(request.value("scope") == "openid profile")
        let next = grant.receive(status: 200, body: Self.deviceCode, now: 100)
        #expect(next.count == 2)
        #expect(
            next.first
                == .showUserCode(
                    DeviceCodePrompt(
                        provider: "corp", userCode: "WDJB-MJHT", verificationURI: "http://127.0.0.1:8000/activate",
                        verificationURIComplete: nil, expiresAt: 700)))
        guard case .sendAfter(5, let poll) = next.last else {
            Issue.record("no poll: \(next)")
            return
        }
        #expect(poll.value("grant_type") == "urn:ietf:params:oauth:grant-type:device_code")
        #expect(poll.value("device_code") == "DC-SECRET")
        #expect(!poll.description.contains("DC-SECRET"))
        #expect(grant.phase == .polling(interval: 5, deadline: 700))
    }

    @Test("authorization_pending polls again; slow_down adds 5 s each time")
    func pendingAndSlowDown() {
        var grant = polling()
        let pending = grant.receive(status: 400, body: Fixtures.json(#"{"error":"authorization_pending"}"#), now: 5)
        guard case .sendAfter(5, _) = pending.first else {
            Issue.record("pending: \(pending)")
            return
        }
        let slow = grant.receive(status: 400, body: Fixtures.json(#"{"error":"slow_down"}"#), now: 10)
        guard case .sendAfter(10, _) = slow.first else {
            Issue.record("slow_down: \(slow)")
            return
        }
        let slower = grant.receive(status: 400, body: Fixtures.json(#"{"error":"slow_down"}"#), now: 20)
        guard case .sendAfter(15, _) = slower.first else {
            Issue.record("slow_down twice: \(slower)")
            return
        }
        #expect(grant.phase == .polling(interval: 15, deadline: 600))
    }

    @Test("tokens finish the grant")
    func approved() {
        var grant = polling()
        let done = grant.receive(status: 200, body: Fixtures.tokens, now: 30)
        guard case .finish(let tokens) = done.first else {
            Issue.record("not finished: \(done)")
            return
        }
        #expect(tokens.accessToken == "AT-1")
        #expect(tokens.expiresAt == 3630)
        #expect(grant.phase == .finished)
        #expect(grant.receive(status: 200, body: Fixtures.tokens, now: 31).isEmpty)
    }

    @Test(
        "access_denied, expired_token and other errors end the grant with typed errors",
        arguments: [
            (#"{"error":"access_denied"}"#, IdentityError.denied(provider: "corp", step: .token)),
            (#"{"error":"expired_token"}"#, IdentityError.expired(provider: "corp", step: .token)),
            (
                #"{"error":"invalid_client","error_description":"who?"}"#,
                IdentityError.providerError(
                    provider: "corp", step: .token, error: "invalid_client", description: "who?", status: 400)
            ),
        ])
    func refusals(body: String, expected: IdentityError) {
        var grant = polling()
        #expect(grant.receive(status: 400, body: Fixtures.json(body), now: 10) == [.fail(expected)])
        #expect(grant.phase == .finished)
    }

    @Test("pending past the device code's lifetime expires without another poll")
    func deadline() {
        var grant = polling()
        let late = grant.receive(status: 400, body: Fixtures.json(#"{"error":"authorization_pending"}"#), now: 596)
        #expect(late == [.fail(.expired(provider: "corp", step: .token))])
    }

    @Test("cancel ends the grant; an unreachable provider is retried until the deadline")
    func cancelAndUnreachable() {
        var grant = polling()
        guard case .sendAfter(5, _) = grant.unreachable(reason: "connection refused", now: 10).first else {
            Issue.record("no retry")
            return
        }
        #expect(grant.cancel() == [.fail(.cancelled(provider: "corp", step: .token))])
        #expect(grant.cancel().isEmpty)
        var early = DeviceGrant(provider: Fixtures.provider())
        _ = early.start()
        #expect(
            early.unreachable(reason: "refused", now: 0)
                == [.fail(.unreachable(provider: "corp", step: .deviceAuthorization, reason: "refused"))])
    }

    @Test("a server error at either step is serverError with its status")
    func serverErrors() {
        var grant = DeviceGrant(provider: Fixtures.provider())
        _ = grant.start()
        #expect(
            grant.receive(status: 503, body: Fixtures.json("<html>Service Unavailable</html>"), now: 0)
                == [.fail(.serverError(provider: "corp", step: .deviceAuthorization, status: 503))])
        var polling = polling()
        #expect(
            polling.receive(status: 500, body: [], now: 5)
                == [.fail(.serverError(provider: "corp", step: .token, status: 500))])
    }

    @Test("a malformed device authorization answer or a non-https verification URI is refused")
    func badDeviceCode() {
        for body in [
            "<html>", #"{"device_code":"DC","user_code":"U","expires_in":600}"#,
            #"{"device_code":"DC","user_code":"U","verification_uri":"http://evil.example/activate","expires_in":600}"#,
            #"{"device_code":"DC","user_code":"U","verification_uri":"https://idp.example/a","expires_in":600,"interval":0}"#,
        ] {
            var grant = DeviceGrant(provider: Fixtures.provider())
            _ = grant.start()
            let actions = grant.receive(status: 200, body: Fixtures.json(body), now: 0)
            guard case .fail(let error) = actions.first, actions.count == 1 else {
                Issue.record("accepted \(body): \(actions)")
                continue
            }
            #expect(error.step == .deviceAuthorization)
            #expect(error.provider == "corp")
        }
    }
}
