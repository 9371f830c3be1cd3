import Foundation
import Testing

/// The identity broker through the real `cordond` and `cordon` against the local authlib provider
/// (docs/CLI.md, docs/ARCHITECTURE.md "Identity"): `cordon login` with the device grant (the code
/// approved at the provider's admin endpoint, as the user would), `cordon identity status` (never a
/// token), `cordon logout --identity`, the code flow through `--identity-browser`, and every
/// refusal printing its error and hint. cordond, the CLI and the apps run as an ordinary user
/// (``UserAgent``), in test mode: only test mode takes the short poll delay and the browser
/// stand-in.
@Suite(.serialized) struct IdentityEndToEndTests {
    static let domain = "mail.corp.example"

    /// `cordond` as the user in test mode with the provider's policy (unbound apps trusted), a short
    /// poll delay and the browser stand-in; the container initialised and unlocked.
    static func started(
        _ provider: IdentityProviderProcess, flow: String, issuerOnly: Bool = false,
        environment: [String: String] = [:]
    ) async throws -> UserAgent {
        let text = provider.policy(
            flow: flow, domain: domain, apps: ["com.example.mail", "com.example.calendar"], issuerOnly: issuerOnly)
        var policy = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        policy["apps"] = ["unknown": "trusted"]
        chmod(provider.scratch.path, 0o755)  // the user runs the browser stand-in from there
        return try await UserAgent(
            policy: String(decoding: try JSONSerialization.data(withJSONObject: policy), as: UTF8.self),
            arguments: [
                "--identity-poll-delay", "0.05", "--identity-browser",
                try provider.browserProgram(in: provider.scratch.path),
            ], testMode: true, environment: environment)
    }

    static func cordon(_ agent: UserAgent, _ arguments: [String]) async throws -> CommandResult {
        try await agent.cli(arguments)
    }

    /// The hint of `SignInFailed`.
    static let signInFailedHint =
        "`cordon identity status` shows the provider's endpoints; once the cause is fixed, `cordon login` again"

    /// Issue #32, item 4: a provider whose port refuses connections is named as the system says
    /// it, in one sentence with its hint (not "connection reset (error set): … (errno: 111)").
    @Test func aProviderThatRefusesTheConnectionIsNamedAsTheSystemSaysIt() async throws {
        let provider = try IdentityProviderProcess()
        let agent = try await Self.started(provider, flow: "device")
        defer { agent.cleanUp() }
        provider.stop()
        let refused = try await Self.cordon(agent, ["login"])
        Self.expectRefused(
            refused,
            "the sign-in with local failed at the device authorization request: "
                + "the connection to 127.0.0.1:\(provider.port) was refused\n",
            hint: Self.signInFailedHint)
        #expect(!refused.stderr.contains("errno") && !refused.stderr.contains("reset"), "\(refused.stderr)")
    }

    /// Issue #31: `cordon logout --identity` with the provider gone deletes the session all the
    /// same and says why the tokens were not revoked: the refusal, reported at once (no retry
    /// until the connect timeout).
    @Test func logoutWithTheProviderGoneDeletesTheSessionAndNamesTheRefusal() async throws {
        let provider = try IdentityProviderProcess()
        let agent = try await Self.started(provider, flow: "device")
        defer { agent.cleanUp() }
        let (login, _) = try await Self.login(agent, provider, action: "approve")
        #expect(login.status == 0, "\(login.stderr)")
        provider.stop()
        let logout = try await Self.cordon(agent, ["logout", "--identity"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(
            logout.stdout
                == "signed out of local: 1 session deleted, not revoked: "
                + "the connection to 127.0.0.1:\(provider.port) was refused\n", "\(logout.stdout)")
        let status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.stdout.contains("local") && !status.stdout.contains(" yes"), "\(status.stdout)")
    }

    /// A refused command: its exit status, its error line and its hint.
    static func expectRefused(_ result: CommandResult, _ message: String, hint: String) {
        #expect(result.status != 0)
        #expect(result.stderr.contains("cordon: error: \(message)"), "\(result.stderr)")
        #expect(result.stderr.contains("hint: \(hint)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }

    /// An app of the user asking for a token for `domain` (registered, hardened): the provider and
    /// the token it got, or the error.
    static let getToken = """
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.mail"})
        harden()
        reply = call(s, "io.cordon.Identity.GetToken", {"domain": sys.argv[2]})
        print(json.dumps({"error": error(reply), "token": reply.get("parameters", {})}))
        """

    /// A program of the user asking for the domain's token three ways the agent refuses: on a
    /// connection that never registered, registered but still dumpable, and (hardened) with a
    /// domain that is not a string. Each reply as it came.
    static let getTokenRefusals = """
        s = connect(sys.argv[1])
        unregistered = call(s, "io.cordon.Identity.GetToken", {"domain": sys.argv[2]})
        t = connect(sys.argv[1])
        call(t, "io.cordon.App.Register", {"appId": "com.example.mail"})
        dumpable = call(t, "io.cordon.Identity.GetToken", {"domain": sys.argv[2]})
        harden()
        malformed = call(t, "io.cordon.Identity.GetToken", {"domain": 1})
        print(json.dumps({"unregistered": error(unregistered), "dumpable": error(dumpable),
                          "malformed": error(malformed),
                          "malformedParameter": malformed.get("parameters", {}).get("parameter"),
                          "replies": [unregistered, dumpable, malformed]}))
        """

    /// Runs `cordon login` while a client of the user joins the same sign-in to read the code, and
    /// answers it at the provider with `action`; the command's result and the code's prompt.
    static func login(_ agent: UserAgent, _ provider: IdentityProviderProcess, action: String) async throws
        -> (CommandResult, [String: Any])
    {
        async let login = cordon(agent, ["login"])
        let prompts = agent.home.appending("prompt-\(UUID().uuidString.prefix(6)).json")
        async let watcher = agent.attack(
            """
            s = connect(sys.argv[1])
            s.sendall(json.dumps({"method": "io.cordon.Identity.SignIn", "parameters": {"provider": "local"},
                                  "more": True}).encode() + b"\\0")
            data, done = b"", False
            while not done:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                while b"\\0" in data:
                    frame, data = data.split(b"\\0", 1)
                    reply = json.loads(frame)
                    prompt = reply.get("parameters", {}).get("prompt")
                    if prompt:
                        with open(sys.argv[2] + ".tmp", "w") as out:
                            json.dump(prompt, out)
                        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
                    if not reply.get("continues"):
                        done = True
            print(json.dumps({"done": True}))
            """, [prompts])
        var prompt: [String: Any] = [:]
        try await eventually("the sign-in's code is shown") {
            guard let data = FileManager.default.contents(atPath: prompts),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return false }
            prompt = object
            return true
        }
        // The user enters the code the command printed (the watcher saw the same one).
        let code = try #require(prompt["userCode"] as? String, "\(prompt)")
        try await provider.admin("/admin/device", [("user_code", code), ("action", action)])
        let result = try await login
        _ = try await watcher
        return (result, prompt)
    }

    /// A provider named by its issuer alone: `cordon login` signs in with the discovered endpoints,
    /// `cordon identity status` shows them (and the user of the ID token verified with the
    /// discovered JWKS); a discovery document naming another issuer is refused at step `discovery`.
    @Test func loginWithADiscoveredProviderAndAWrongIssuerRefused() async throws {
        let provider = try IdentityProviderProcess()
        try await provider.admin("/admin/config", [("device_id_token", "1"), ("discovery_wrong_issuer", "1")])
        let agent = try await Self.started(provider, flow: "device", issuerOnly: true)
        defer { agent.cleanUp() }
        let refused = try await Self.cordon(agent, ["login"])
        Self.expectRefused(
            refused,
            "the sign-in with local failed at discovery: the document's /issuer is "
                + "\"https://idp.attacker.example\", not the configured \"\(provider.base)\"",
            hint: Self.signInFailedHint)
        try await provider.admin("/admin/config", [("discovery_wrong_issuer", "0")])
        let (login, _) = try await Self.login(agent, provider, action: "approve")
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains("yes (alice)"), "\(status.stdout)")
        #expect(
            status.stdout.contains(
                "local: endpoints from \(provider.base)/.well-known/openid-configuration and the policy:"),
            "\(status.stdout)")
        #expect(status.stdout.contains("  token                \(provider.base)/token\n"), "\(status.stdout)")
        #expect(status.stdout.contains("  jwks                 \(provider.base)/jwks\n"), "\(status.stdout)")
    }

    @Test func loginWithTheDeviceGrantStatusAndLogoutThroughTheRealDaemon() async throws {
        let provider = try IdentityProviderProcess()
        let agent = try await Self.started(provider, flow: "device")
        defer { agent.cleanUp() }
        var status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains("local"), "\(status.stderr)")
        // An app asks first; `cordon login` joins its sign-in and prints the code.
        async let token = agent.attack(Self.getToken, [Self.domain])
        let (login, prompt) = try await Self.login(agent, provider, action: "approve")
        #expect(login.status == 0, "\(login.stderr)")
        let uri = prompt["verificationURIComplete"] as? String ?? prompt["verificationURI"] as? String ?? "?"
        let userCode = prompt["userCode"] as? String ?? "?"
        #expect(
            login.stdout.contains("to sign in to local, open \(uri) and enter the code \(userCode)"), "\(login.stdout)")
        #expect(login.stdout.contains("signed in to local (token until "), "\(login.stdout)")
        let answer = try await token
        let issued = answer["token"] as? [String: Any] ?? [:]
        let accessToken = issued["accessToken"] as? String ?? ""
        #expect(issued["provider"] as? String == "local" && !accessToken.isEmpty, "\(answer)")
        // Asked again, the valid token comes from the session the agent keeps on its loop.
        let again = try await agent.attack(Self.getToken, [Self.domain])
        #expect((again["token"] as? [String: Any])?["accessToken"] as? String == accessToken, "\(again)")
        // A program of the same user gets none of it: unregistered, registered but dumpable, and with
        // malformed parameters (read by `JSONReadable`, the error naming the parameter as before).
        let attacker = try await agent.attack(Self.getTokenRefusals, [Self.domain])
        #expect(attacker["unregistered"] as? String == "io.cordon.App.NotRegistered", "\(attacker)")
        #expect(attacker["dumpable"] as? String == "io.cordon.App.ProcessNotHardened", "\(attacker)")
        #expect(attacker["malformed"] as? String == "org.varlink.service.InvalidParameter", "\(attacker)")
        #expect(attacker["malformedParameter"] as? String == "domain", "\(attacker)")
        #expect(!"\(attacker)".contains(accessToken))
        // Status: the session, never the token (table or JSON).
        status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains(Self.domain) && status.stdout.contains("yes"))
        #expect(!status.stdout.contains(accessToken))
        let json = try await Self.cordon(agent, ["identity", "status", "--json"])
        #expect(json.status == 0 && json.stdout.contains("\"signedInAt\"") && !json.stdout.contains(accessToken))
        // Logout revokes at the provider and deletes the session.
        let logout = try await Self.cordon(agent, ["logout", "--identity"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(
            logout.stdout == "signed out of local: 1 session deleted, revoked at the provider\n", "\(logout.stdout)")
        status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.stdout.contains("local") && !status.stdout.contains(" yes"), "\(status.stdout)")
        // Refusals print the error and a hint.
        Self.expectRefused(
            try await Self.cordon(agent, ["login", "--provider", "nope"]), "no identity provider nope (known: local)",
            hint: "give one with `--provider`")
        // A denied sign-in: the code was printed, then the error and its hint. An app asking after
        // the logout gets that sign-in's refusal, never the token the agent kept before it.
        async let afterLogout = agent.attack(Self.getToken, [Self.domain])
        let (denied, _) = try await Self.login(agent, provider, action: "deny")
        let refusedAfterLogout = try await afterLogout
        #expect(refusedAfterLogout["error"] as? String == "io.cordon.Identity.SignInFailed", "\(refusedAfterLogout)")
        #expect(!"\(refusedAfterLogout)".contains(accessToken))
        #expect(denied.stdout.hasPrefix("to sign in to local, open "), "\(denied.stdout)")
        Self.expectRefused(
            CommandResult(status: denied.status, stdout: "", stderr: denied.stderr),
            "the sign-in with local failed at the token request: the authorization was denied",
            hint: Self.signInFailedHint)
        #expect(try await agent.cli(["lock"]).status == 0)
        let locked = try await Self.cordon(agent, ["login"])
        #expect(locked.status != 0)
        // The state as the user knows it (`locked`), not the protocol's `lockedKeyHeld`.
        #expect(
            locked.stderr.contains("cordon: error: no sign-in and no token while the container is locked\n"),
            "\(locked.stderr)")
        #expect(locked.stderr.contains("hint: "), "\(locked.stderr)")
    }

    /// An app's `GetToken` starts the device grant with no terminal watching: the code reaches the
    /// user as a desktop notification (a real notification server on a private session bus), the
    /// user enters it at the provider, the app gets its token, and the notification is withdrawn.
    @Test func anImplicitSignInShowsTheCodeAsADesktopNotification() async throws {
        let notifications = try await FakeNotificationServer(anyUser: true)
        defer { notifications.cleanUp() }
        let provider = try IdentityProviderProcess()
        let agent = try await Self.started(
            provider, flow: "device", environment: ["CORDON_SESSION_BUS_ADDRESS": notifications.address])
        defer { agent.cleanUp() }
        async let token = agent.attack(Self.getToken, [Self.domain])
        var shown = ""
        try await eventually("the code is shown as a notification") {
            shown = notifications.calls.first { $0.contains(" Notify ") } ?? ""
            return !shown.isEmpty
        }
        #expect(shown.contains(#""Cordon" 0 "dialog-password" "Sign in to local" "Enter the code "#), "\(shown)")
        // The user reads the code off the notification and enters it at the provider.
        let code = try #require(
            shown.firstRange(of: "Enter the code ").map { range in
                String(shown[range.upperBound...].prefix { $0 != " " })
            })
        try await provider.admin("/admin/device", [("user_code", code), ("action", "approve")])
        let answer = try await token
        let issued = answer["token"] as? [String: Any] ?? [:]
        let accessToken = issued["accessToken"] as? String ?? ""
        #expect(issued["provider"] as? String == "local" && !accessToken.isEmpty, "\(answer)")
        // Asked again, the valid token comes from the session the agent keeps on its loop.
        let again = try await agent.attack(Self.getToken, [Self.domain])
        #expect((again["token"] as? [String: Any])?["accessToken"] as? String == accessToken, "\(again)")
        #expect(!shown.contains(accessToken))
        try await eventually("the notification is withdrawn once signed in") {
            notifications.calls.contains { $0.contains(" CloseNotification ") }
        }
    }

    @Test func theCodeFlowOpensTheConfiguredBrowserAndLogoutNamesWhatItDid() async throws {
        let provider = try IdentityProviderProcess()
        let agent = try await Self.started(provider, flow: "authorizationCode")
        defer { agent.cleanUp() }
        // The agent opens the authorization URL with the browser stand-in, which follows the redirect.
        let login = try await Self.cordon(agent, ["login"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.hasPrefix("signed in to local (token until "), "\(login.stdout)")
        let status = try await Self.cordon(agent, ["identity", "status"])
        #expect(status.stdout.contains("authorizationCode") && status.stdout.contains(Self.domain))
        let logout = try await Self.cordon(agent, ["logout", "--identity"])
        #expect(
            logout.stdout == "signed out of local: 1 session deleted, revoked at the provider\n", "\(logout.stdout)")
        let again = try await Self.cordon(agent, ["logout", "--identity"])
        #expect(again.stdout == "not signed in to any identity provider\n", "\(again.stdout)")
    }
}
