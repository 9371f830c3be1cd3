import CordonIdentity
import Foundation
import Testing

/// The CPA state machines fed the exchanges the EBU reference client recorded against cpa.rts.ch
/// (`peers/cpa-ios-stubs`): the requests they make must be the recorded requests, and the recorded
/// answers must lead where the reference client's tests say.
@Suite("CPA 1.0 against the recorded cpa-ios exchanges")
struct CPAVectorTests {
    static let provider = CPAProviderConfiguration(name: "rts", baseURL: "https://cpa.rts.ch", domains: ["cpa.rts.ch"])
    static let credentials = CPAClientCredentials(clientID: "407", clientSecret: "f9f1c336a59219e05a59eecb40eb49eb")
    static let client = CPAClientDescription(
        clientName: "iOS Test", softwareID: "ch.ebu.ios_test", softwareVersion: "0.1")

    func exchange(_ name: String) throws -> RecordedExchange { try RecordedExchange(name) }

    /// A user sign-in with the recorded credentials, past the recorded association at t=0.
    func polling() throws -> CPASignIn {
        var signIn = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        _ = signIn.start()
        let code = try exchange("request_code")
        _ = signIn.receive(status: code.status, body: code.body, now: 0)
        return signIn
    }

    @Test("registration sends the recorded request; its 201 gives the client id and secret")
    func registration() throws {
        let recorded = try exchange("register_client")
        let request = Self.provider.registrationRequest(Self.client)
        #expect(request.url == "https://cpa.rts.ch/register")
        #expect(request.contentType == "application/json")
        #expect(RecordedExchange.object(request) == recorded.requestObject)
        #expect(recorded.status == 201)
        let credentials = try Self.provider.registered(status: recorded.status, body: recorded.body)
        #expect(credentials == Self.credentials)
        #expect(!"\(credentials)".contains("f9f1c336"))
        #expect(!String(reflecting: credentials).contains("f9f1c336"))
        var dumped = ""
        dump(credentials, to: &dumped)
        #expect(!dumped.contains("f9f1c336"))
    }

    @Test("a user sign-in: the recorded association, 202 pending, slow_down, then the user token")
    func userToken() throws {
        var signIn = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        guard case .send(let associate) = signIn.start().first else {
            Issue.record("no association")
            return
        }
        let code = try exchange("request_code")
        #expect(associate.url == "https://cpa.rts.ch/associate")
        #expect(RecordedExchange.object(associate) == code.requestObject)
        #expect(!associate.description.contains("f9f1c336"))
        let next = signIn.receive(status: code.status, body: code.body, now: 1000)
        #expect(
            next.first
                == .showUserCode(
                    DeviceCodePrompt(
                        provider: "rts", userCode: "KjaCtqSC", verificationURI: "https://cpa.rts.ch",
                        verificationURIComplete: nil, expiresAt: 1000 + 3599)))
        guard case .sendAfter(5, let poll) = next.last, next.count == 2 else {
            Issue.record("no poll: \(next)")
            return
        }
        #expect(RecordedExchange.object(poll) == (try exchange("request_user_token")).requestObject)
        #expect(!poll.description.contains("3ddd6b1e"))
        let pending = try exchange("request_user_token_authorization_pending")
        #expect(pending.status == 202)
        guard case .sendAfter(5, _) = signIn.receive(status: pending.status, body: pending.body, now: 1005).first
        else {
            Issue.record("pending did not poll again")
            return
        }
        let slow = try exchange("request_user_token_slow_down")
        guard case .sendAfter(10, _) = signIn.receive(status: slow.status, body: slow.body, now: 1010).first else {
            Issue.record("slow_down did not add 5 s")
            return
        }
        #expect(signIn.phase == .polling(interval: 10, deadline: 4599))
        let token = try exchange("request_user_token")
        guard case .finish(let tokens) = signIn.receive(status: token.status, body: token.body, now: 1020).first else {
            Issue.record("the user token did not finish")
            return
        }
        #expect(tokens.accessToken == "614bc2b750852c79fbd8edfa8f9f4561")
        #expect(tokens.expiresAt == 1020 + 2_591_999)
        #expect(tokens.domain == "cpa.rts.ch")
        #expect(tokens.domainDisplayName == "RTS - HbbTV demo")
        #expect(tokens.userName == "james@nowhere.com")
        #expect(tokens.refreshToken == nil)
        #expect(signIn.phase == .finished)
        #expect(!signIn.registeredNewClient)
    }

    @Test(
        "cancelled, expired and invalid_client end the polling with typed errors",
        arguments: [
            ("request_user_token_denied", IdentityError.denied(provider: "rts", step: .token)),
            ("request_user_token_expired", IdentityError.expired(provider: "rts", step: .token)),
            (
                "request_user_token_invalid_client",
                IdentityError.providerError(
                    provider: "rts", step: .token, error: "invalid_client",
                    description: "Unknown client: 1NV4L1DCL13N7", status: 400)
            ),
        ])
    func pollingRefusals(name: String, expected: IdentityError) throws {
        var signIn = try polling()
        let answer = try exchange(name)
        #expect(signIn.receive(status: answer.status, body: answer.body, now: 5) == [.fail(expected)])
        #expect(signIn.phase == .finished)
    }

    @Test("a provider that never approves: pending past the code's lifetime expires without another poll")
    func neverApproves() throws {
        var signIn = try polling()
        let pending = try exchange("request_user_token_authorization_pending")
        for now in stride(from: 5.0, through: 15, by: 5) {
            guard case .sendAfter(5, _) = signIn.receive(status: pending.status, body: pending.body, now: now).first
            else {
                Issue.record("pending at \(now) did not poll")
                return
            }
        }
        #expect(
            signIn.receive(status: pending.status, body: pending.body, now: 3595)
                == [.fail(.expired(provider: "rts", step: .token))])
    }

    @Test("a client token: the recorded client credentials request and answer (no user name)")
    func clientToken() throws {
        let recorded = try exchange("request_client_token")
        let credentials = CPAClientCredentials(clientID: "407", clientSecret: "0b596bf22cf992b8fd8202126ee5db40")
        var signIn = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .client, credentials: credentials, client: Self.client)
        guard case .send(let request) = signIn.start().first else {
            Issue.record("no token request")
            return
        }
        #expect(request.url == "https://cpa.rts.ch/token")
        #expect(RecordedExchange.object(request) == recorded.requestObject)
        guard case .finish(let tokens) = signIn.receive(status: recorded.status, body: recorded.body, now: 7).first
        else {
            Issue.record("the client token did not finish")
            return
        }
        #expect(tokens.accessToken == "5ba522aa04f23a9075da61f6d859e347")
        #expect(tokens.userName == nil)
        #expect(tokens.domainDisplayName == "RTS - HbbTV demo")
        #expect(tokens.expiresAt == 7 + 2_591_999)
    }

    @Test("renewal by client credentials: a paired client gets a user token; nulls are missing members")
    func renewal() throws {
        let user = try exchange("refresh_token_user")
        let credentials = Self.credentials
        let request = Self.provider.clientTokenRequest(credentials, domain: "cpa.rts.ch")
        #expect(RecordedExchange.object(request) == user.requestObject)
        let tokens = try Self.provider.clientToken(
            status: user.status, body: user.body, credentials: credentials, domain: "cpa.rts.ch", now: 0)
        #expect(tokens.accessToken == "238e39ed96eef7ec2e46f92ba4bcb1b0")
        #expect(tokens.userName == "james@nowhere.com")
        let client = try exchange("refresh_token_client")
        #expect(
            try Self.provider.clientToken(
                status: client.status, body: client.body, credentials: credentials, domain: "cpa.rts.ch", now: 0
            ).userName == nil)
        let nulls = try exchange("refresh_token_json_with_null")
        #expect(
            throws: IdentityError.malformedResponse(
                provider: "rts", step: .token, reason: "\"access_token\" is missing")
        ) {
            try Self.provider.clientToken(
                status: nulls.status, body: nulls.body, credentials: credentials, domain: "cpa.rts.ch", now: 0)
        }
        let invalid = try exchange("refresh_token_invalid_client")
        #expect(
            throws: IdentityError.providerError(
                provider: "rts", step: .token, error: "invalid_client", description: "Unknown client: 1NV4L1DCL13N7",
                status: 400)
        ) {
            try Self.provider.clientToken(
                status: invalid.status, body: invalid.body, credentials: credentials, domain: "cpa.rts.ch", now: 0)
        }
    }

    @Test("stored credentials the provider does not know are replaced by one new registration")
    func reregistration() throws {
        for (mode, refusal) in [
            (CPASignIn.Mode.user, "request_code_invalid_client"), (.client, "request_client_token_invalid_client"),
        ] {
            var signIn = CPASignIn(
                provider: Self.provider, domain: "cpa.rts.ch", mode: mode,
                credentials: CPAClientCredentials(clientID: "1NV4L1DCL13N7", clientSecret: "1NV4L1D53CR37"),
                client: Self.client)
            _ = signIn.start()
            let refused = try exchange(refusal)
            guard case .send(let register) = signIn.receive(status: refused.status, body: refused.body, now: 0).first
            else {
                Issue.record("\(refusal) did not register again")
                continue
            }
            #expect(register.step == .registration)
            #expect(signIn.credentials == nil)
            let registered = try exchange("register_client")
            guard
                case .send(let retried) = signIn.receive(status: registered.status, body: registered.body, now: 1)
                    .first
            else {
                Issue.record("no retry after the registration")
                continue
            }
            #expect(retried.value("client_id") == "407")
            #expect(signIn.registeredNewClient)
            #expect(signIn.credentials == Self.credentials)
            // The new credentials refused too: no second registration.
            let again = signIn.receive(status: refused.status, body: refused.body, now: 2)
            guard case .fail(.providerError("rts", _, "invalid_client", _, _)) = again.first else {
                Issue.record("registered twice: \(again)")
                continue
            }
        }
    }

    @Test("without credentials the sign-in registers first, then associates")
    func registersFirst() throws {
        var signIn = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: nil, client: Self.client)
        guard case .send(let register) = signIn.start().first else {
            Issue.record("no registration")
            return
        }
        #expect(register.url == "https://cpa.rts.ch/register")
        let registered = try exchange("register_client")
        guard case .send(let associate) = signIn.receive(status: registered.status, body: registered.body, now: 0).first
        else {
            Issue.record("no association")
            return
        }
        #expect(RecordedExchange.object(associate) == (try exchange("request_code")).requestObject)
        #expect(signIn.registeredNewClient)
    }

    @Test("HTTP 500, HTML and a token for another domain are typed errors naming provider and step")
    func badAnswers() throws {
        let html = Fixtures.json("<html>Internal Server Error</html>")
        var registering = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .client, credentials: nil, client: Self.client)
        _ = registering.start()
        #expect(
            registering.receive(status: 500, body: html, now: 0)
                == [.fail(.serverError(provider: "rts", step: .registration, status: 500))])
        var associating = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        _ = associating.start()
        #expect(
            associating.receive(status: 503, body: [], now: 0)
                == [.fail(.serverError(provider: "rts", step: .association, status: 503))])
        var poll = try polling()
        #expect(
            poll.receive(status: 500, body: html, now: 5) == [
                .fail(.serverError(provider: "rts", step: .token, status: 500))
            ])
        var malformed = try polling()
        guard
            case .fail(.malformedResponse("rts", .token, _)) = malformed.receive(status: 200, body: html, now: 5).first
        else {
            Issue.record("HTML accepted")
            return
        }
        var elsewhere = try polling()
        let other = Fixtures.json(
            #"{"access_token":"T","token_type":"bearer","expires_in":60,"domain":"evil.example"}"#)
        guard
            case .fail(.malformedResponse("rts", .token, let reason)) = elsewhere.receive(
                status: 200, body: other, now: 5
            ).first
        else {
            Issue.record("a token for another domain was accepted")
            return
        }
        #expect(reason.contains("another domain"))
        var bare = try polling()
        guard case .fail(.malformedResponse) = bare.receive(status: 202, body: Fixtures.json("{}"), now: 5).first else {
            Issue.record("a 202 without a reason was accepted")
            return
        }
    }

    @Test("an association without a user code asks the user to confirm; without a URI it polls at once")
    func pairedAssociation() {
        var confirm = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        _ = confirm.start()
        let asked = confirm.receive(
            status: 200,
            body: Fixtures.json(
                #"{"device_code":"D","verification_uri":"https://cpa.rts.ch","interval":5,"expires_in":60}"#),
            now: 0)
        guard case .showUserCode(let prompt) = asked.first, case .sendAfter(5, _) = asked.last else {
            Issue.record("no confirmation: \(asked)")
            return
        }
        #expect(prompt.userCode.isEmpty)
        var provisioned = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        _ = provisioned.start()
        let immediate = provisioned.receive(
            status: 200, body: Fixtures.json(#"{"device_code":"D","expires_in":60}"#), now: 0)
        guard case .send(let poll) = immediate.first, immediate.count == 1 else {
            Issue.record("no immediate poll: \(immediate)")
            return
        }
        #expect(poll.value("device_code") == "D")
    }

    @Test("a verification URI that is not https, or a user code without one, is refused")
    func badAssociation() {
        for body in [
            #"{"device_code":"D","user_code":"U","verification_uri":"http://evil.example/","expires_in":60}"#,
            #"{"device_code":"D","user_code":"U","expires_in":60}"#,
            #"{"device_code":"D","user_code":"U","verification_uri":"https://cpa.rts.ch","expires_in":60,"interval":0}"#,
        ] {
            var signIn = CPASignIn(
                provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
                client: Self.client)
            _ = signIn.start()
            let actions = signIn.receive(status: 200, body: Fixtures.json(body), now: 0)
            guard case .fail(let error) = actions.first, actions.count == 1 else {
                Issue.record("accepted \(body)")
                continue
            }
            #expect(error.step == .association)
            #expect(error.provider == "rts")
        }
    }

    @Test("unreachable: polls are retried until the deadline, other steps fail; cancel names the step")
    func unreachableAndCancel() throws {
        var signIn = try polling()
        guard case .sendAfter(5, _) = signIn.unreachable(reason: "connection refused", now: 10).first else {
            Issue.record("no retry")
            return
        }
        #expect(signIn.unreachable(reason: "refused", now: 3596) == [.fail(.expired(provider: "rts", step: .token))])
        var associating = CPASignIn(
            provider: Self.provider, domain: "cpa.rts.ch", mode: .user, credentials: Self.credentials,
            client: Self.client)
        _ = associating.start()
        #expect(
            associating.unreachable(reason: "refused", now: 0)
                == [.fail(.unreachable(provider: "rts", step: .association, reason: "refused"))])
        var cancelled = try polling()
        #expect(cancelled.cancel() == [.fail(.cancelled(provider: "rts", step: .token))])
        #expect(cancelled.cancel().isEmpty)
    }

    @Test("no client secret or device code in an error, even when the provider quotes one")
    func noSecrets() throws {
        var signIn = try polling()
        let quoting = Fixtures.json(
            #"{"error":"invalid_request","error_description":"bad secret f9f1c336a59219e05a59eecb40eb49eb"}"#)
        guard case .fail(let error) = signIn.receive(status: 400, body: quoting, now: 5).first else {
            Issue.record("accepted")
            return
        }
        #expect(
            error
                == .providerError(
                    provider: "rts", step: .token, error: "invalid_request", description: "(withheld)", status: 400))
        #expect(!Fixtures.text(error).contains("f9f1c336"))
        for request in [
            Self.provider.associationRequest(Self.credentials, domain: "cpa.rts.ch"),
            Self.provider.clientTokenRequest(Self.credentials, domain: "cpa.rts.ch"),
        ] {
            #expect(!request.description.contains("f9f1c336"))
            #expect(String(decoding: request.body, as: UTF8.self).contains("f9f1c336"))
        }
    }

    @Test("the base URL must be https or loopback, without a query, with a domain")
    func validation() throws {
        try Self.provider.validate()
        #expect(Self.provider.tokenEndpoint == "https://cpa.rts.ch/token")
        let prefixed = CPAProviderConfiguration(name: "p", baseURL: "https://ap.example/cpa/", domains: ["d"])
        #expect(prefixed.associationEndpoint == "https://ap.example/cpa/associate")
        for bad in [
            CPAProviderConfiguration(name: "p", baseURL: "http://ap.example", domains: ["d"]),
            CPAProviderConfiguration(name: "p", baseURL: "https://ap.example?x=1", domains: ["d"]),
            CPAProviderConfiguration(name: "p", baseURL: "https://ap.example", domains: []),
        ] {
            #expect(throws: IdentityError.self) { try bad.validate() }
        }
    }

    @Test("JSON bodies escape quotes, backslashes and control characters")
    func jsonEscaping() throws {
        let request = Self.provider.registrationRequest(
            CPAClientDescription(clientName: "a \"quoted\" \\ name\n", softwareID: "é", softwareVersion: "1"))
        let object = RecordedExchange.object(request)
        #expect(object["client_name"] == "a \"quoted\" \\ name\n")
        #expect(object["software_id"] == "é")
    }
}
