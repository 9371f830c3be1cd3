import CordonIdentity
import Foundation
import Testing

/// `CPASignIn` driven against a CPA 1.0 authorization provider on 127.0.0.1 (`peers/cpa_server.py`,
/// answering as the EBU reference provider). The driver here is the test: it sends what each
/// action asks at once and moves its own clock by the waits of `sendAfter` (the tests never sleep).
@Suite("CordonIdentity against the local CPA provider", .serialized)
struct CPAServerTests {
    static let client = CPAClientDescription(
        clientName: "Cordon test", softwareID: "io.cordon.tests", softwareVersion: "1")

    /// A driven sign-in: the prompts shown, the requests sent with their answers' statuses, the
    /// driver's clock and the last action.
    struct Run {
        var prompts: [DeviceCodePrompt] = []
        var requests: [ProviderRequest] = []
        var statuses: [Int] = []
        var clock: Double = 0
        var last: SignInAction?
    }

    /// Runs `signIn` from its start until it finishes or fails (or `limit` requests); `wait` is what
    /// happens while the agent waits before a delayed request (the user acts; the clock may jump).
    func drive(
        _ signIn: inout CPASignIn, _ peer: LocalProvider, limit: Int = 12,
        wait: (inout Run) async throws -> Void = { _ in }
    ) async throws -> Run {
        var run = Run()
        var pending = signIn.start()
        while !pending.isEmpty, run.requests.count < limit {
            let action = pending.removeFirst()
            switch action {
            case .send(let request), .sendAfter(_, let request):
                if case .sendAfter(let seconds, _) = action {
                    run.clock += Double(seconds)
                    try await wait(&run)
                }
                run.requests.append(request)
                let (status, body) = try await peer.send(request)
                run.statuses.append(status)
                pending = signIn.receive(status: status, body: body, now: run.clock)
            case .showUserCode(let prompt): run.prompts.append(prompt)
            case .finish, .fail, .openBrowser:
                run.last = action
                return run
            }
        }
        return run
    }

    func configuration(_ peer: LocalProvider) -> CPAProviderConfiguration {
        CPAProviderConfiguration(name: "local-cpa", baseURL: peer.base, domains: ["cpa.rts.ch", "cpa.ebu.ch"])
    }

    func userSignIn(_ peer: LocalProvider, credentials: CPAClientCredentials? = nil, domain: String = "cpa.rts.ch")
        -> CPASignIn
    {
        CPASignIn(
            provider: configuration(peer), domain: domain, mode: .user, credentials: credentials, client: Self.client)
    }

    @Test("the peer answers as the recorded exchanges: statuses and JSON members")
    func peerMatchesRecordings() async throws {
        let peer = try LocalProvider(script: "cpa_server.py")
        let provider = configuration(peer)
        func check(_ name: String, _ answer: (status: Int, body: [UInt8])) throws {
            let recorded = try RecordedExchange(name)
            #expect(answer.status == recorded.status, "\(name)")
            #expect(RecordedExchange.memberNames(answer.body) == recorded.memberNames, "\(name)")
        }
        let registered = try await peer.send(provider.registrationRequest(Self.client))
        try check("register_client", registered)
        let credentials = try provider.registered(status: registered.status, body: registered.body)
        let unknown = CPAClientCredentials(clientID: "1NV4L1DCL13N7", clientSecret: "1NV4L1D53CR37")
        let rts = "cpa.rts.ch"
        try check("request_client_token", try await peer.send(provider.clientTokenRequest(credentials, domain: rts)))
        try check(
            "request_client_token_invalid_client",
            try await peer.send(provider.clientTokenRequest(unknown, domain: rts)))
        try check("request_code_invalid_client", try await peer.send(provider.associationRequest(unknown, domain: rts)))
        let association = try await peer.send(provider.associationRequest(credentials, domain: rts))
        try check("request_code", association)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(association.body)) as? [String: Any])
        let deviceCode = try #require(object["device_code"] as? String)
        let poll = provider.userTokenRequest(credentials, deviceCode: deviceCode, domain: rts)
        try check("request_user_token_authorization_pending", try await peer.send(poll))
        try await peer.admin("/admin/config", [FormField("slow_down", "1")])
        try check("request_user_token_slow_down", try await peer.send(poll))
        try await peer.admin("/admin/config", [FormField("slow_down", "0")])
        try check(
            "request_user_token_invalid_client",
            try await peer.send(provider.userTokenRequest(unknown, deviceCode: "1NV4L1DCOD3", domain: rts)))
        try await peer.admin("/admin/pair", [FormField("device_code", deviceCode), FormField("action", "approve")])
        try check("request_user_token", try await peer.send(poll))
        try check("refresh_token_user", try await peer.send(provider.clientTokenRequest(credentials, domain: rts)))
        for (action, name) in [("deny", "request_user_token_denied"), ("expire", "request_user_token_expired")] {
            let (_, body) = try await peer.send(provider.associationRequest(credentials, domain: "cpa.ebu.ch"))
            let pairing = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            // The client is paired now: the user only confirms (no user code), as the reference provider.
            #expect(pairing["user_code"] == nil)
            let code = try #require(pairing["device_code"] as? String)
            try await peer.admin("/admin/pair", [FormField("device_code", code), FormField("action", action)])
            try check(
                name,
                try await peer.send(provider.userTokenRequest(credentials, deviceCode: code, domain: "cpa.ebu.ch")))
        }
    }

    @Test("a user sign-in from nothing: 201, association, 202 pending, slow_down, the user pairs, the user token")
    func userSignIn() async throws {
        let peer = try LocalProvider(script: "cpa_server.py")
        var signIn = userSignIn(peer)
        let run = try await drive(&signIn, peer) { run in
            // What the user does while the agent waits: nothing at first, then the provider asks
            // the agent to slow down, then the user enters the code.
            switch run.statuses.count {
            case 3: try await peer.admin("/admin/config", [FormField("slow_down", "1")])
            case 4:
                try await peer.admin("/admin/config", [FormField("slow_down", "0")])
                let code = try #require(run.prompts.first).userCode
                try await peer.admin(
                    "/admin/pair",
                    [FormField("user_code", code), FormField("action", "approve"), FormField("user_name", "alice")])
            default: break
            }
        }
        guard case .finish(let tokens) = run.last else {
            Issue.record("not signed in: \(String(describing: run.last)) after \(run.statuses)")
            return
        }
        #expect(run.statuses == [201, 200, 202, 400, 200])
        #expect(run.requests.map(\.step) == [.registration, .association, .token, .token, .token])
        #expect(run.clock == 5 + 5 + 10)
        #expect(run.prompts.count == 1)
        #expect(run.prompts.first?.verificationURI == peer.base + "/verify")
        #expect(run.prompts.first?.userCode.count == 8)
        #expect(run.prompts.first?.expiresAt == 3599)
        #expect(tokens.userName == "alice")
        #expect(tokens.domain == "cpa.rts.ch")
        #expect(tokens.domainDisplayName == "RTS - HbbTV demo")
        #expect(tokens.expiresAt == run.clock + 2_591_999)
        #expect(signIn.registeredNewClient)
        // Single sign-on across the provider's domains: the paired client gets a user token for the
        // other domain with its credentials alone; that request is also how a CPA token is renewed.
        let credentials = try #require(signIn.credentials)
        var other = CPASignIn(
            provider: configuration(peer), domain: "cpa.ebu.ch", mode: .client, credentials: credentials,
            client: Self.client)
        let second = try await drive(&other, peer)
        guard case .finish(let otherTokens) = second.last else {
            Issue.record("no token for the second domain: \(String(describing: second.last))")
            return
        }
        #expect(otherTokens.userName == "alice")
        #expect(otherTokens.domainDisplayName == "EBU - CPA demo")
        #expect(otherTokens.accessToken != tokens.accessToken)
        #expect(!other.registeredNewClient)
    }

    @Test("the user denies, the pairing code expires, the provider never approves")
    func refusals() async throws {
        let peer = try LocalProvider(script: "cpa_server.py")
        for (action, expected) in [
            ("deny", IdentityError.denied(provider: "local-cpa", step: .token)),
            ("expire", IdentityError.expired(provider: "local-cpa", step: .token)),
        ] {
            var signIn = userSignIn(peer)
            let run = try await drive(&signIn, peer) { run in
                let code = try #require(run.prompts.first).userCode
                try await peer.admin("/admin/pair", [FormField("user_code", code), FormField("action", action)])
            }
            #expect(run.last == .fail(expected), "\(action)")
            #expect(run.statuses.last == 400)
        }
        // Never approving: the agent's clock passes the code's lifetime (a suspended machine, or
        // simply waiting) and the sign-in expires on its own, without another request.
        var signIn = userSignIn(peer)
        let run = try await drive(&signIn, peer) { run in
            if run.statuses.count == 4 { run.clock += 3580 }
        }
        #expect(run.statuses == [201, 200, 202, 202, 202])
        #expect(run.last == .fail(.expired(provider: "local-cpa", step: .token)))
    }

    @Test("HTTP 500 at each step and HTML instead of JSON are typed errors; nothing is finished")
    func serverErrors() async throws {
        let peer = try LocalProvider(script: "cpa_server.py")
        try await peer.admin("/admin/config", [FormField("fail", "1")])
        var registering = userSignIn(peer)
        let refused = try await drive(&registering, peer)
        #expect(refused.last == .fail(.serverError(provider: "local-cpa", step: .registration, status: 500)))
        try await peer.admin("/admin/config", [FormField("fail", "0")])
        var registered = userSignIn(peer)
        _ = try await drive(&registered, peer, limit: 2)
        let credentials = try #require(registered.credentials)
        try await peer.admin("/admin/config", [FormField("fail", "1")])
        var associating = userSignIn(peer, credentials: credentials)
        let unassociated = try await drive(&associating, peer)
        #expect(unassociated.last == .fail(.serverError(provider: "local-cpa", step: .association, status: 500)))
        try await peer.admin("/admin/config", [FormField("fail", "0")])
        var polling = userSignIn(peer, credentials: credentials)
        let failed = try await drive(&polling, peer) { run in
            if run.statuses.count == 1 { try await peer.admin("/admin/config", [FormField("fail", "1")]) }
        }
        #expect(failed.statuses == [200, 500])
        #expect(failed.last == .fail(.serverError(provider: "local-cpa", step: .token, status: 500)))
        try await peer.admin("/admin/config", [FormField("fail", "0"), FormField("malformed", "1")])
        var malformed = CPASignIn(
            provider: configuration(peer), domain: "cpa.rts.ch", mode: .client, credentials: credentials,
            client: Self.client)
        let html = try await drive(&malformed, peer)
        guard case .fail(.malformedResponse("local-cpa", .token, let reason)) = html.last else {
            Issue.record("HTML accepted")
            return
        }
        #expect(reason.contains("not a JSON object"))
    }

    @Test("credentials the provider no longer knows: one new registration, then the token")
    func forgottenClient() async throws {
        let peer = try LocalProvider(script: "cpa_server.py")
        let forgotten = CPAClientCredentials(clientID: "9999", clientSecret: "0123456789abcdef0123456789abcdef")
        var signIn = CPASignIn(
            provider: configuration(peer), domain: "cpa.rts.ch", mode: .client, credentials: forgotten,
            client: Self.client)
        let run = try await drive(&signIn, peer)
        guard case .finish(let tokens) = run.last else {
            Issue.record("not finished: \(String(describing: run.last))")
            return
        }
        #expect(run.statuses == [400, 201, 200])
        #expect(tokens.userName == nil)
        #expect(signIn.registeredNewClient)
        #expect(signIn.credentials?.clientID != "9999")
        #expect(!run.requests.map(\.description).joined().contains("0123456789abcdef"))
    }
}
