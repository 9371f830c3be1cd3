import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The identity broker through the real `cordond` and `cordon` against the local authlib provider
/// (docs/CLI.md, docs/ARCHITECTURE.md "Identity"): `cordon login` with the device grant (the code
/// approved at the provider's admin endpoint, as the user would), `cordon identity status` (never a
/// token), `cordon logout --identity`, the code flow through `--identity-browser`, and every
/// refusal printing its error and hint.
@Suite(.serialized) struct IdentityEndToEndTests {
    static let passcode = "2468"
    static let domain = "mail.corp.example"

    /// `cordond` in test mode with the provider's policy, a short poll delay and the browser
    /// stand-in; the container initialised and unlocked.
    static func started(
        _ provider: IdentityProviderProcess, flow: String, issuerOnly: Bool = false,
        environment: [String: String] = [:]
    ) async throws -> DaemonProcess {
        let root = try TemporaryDirectory()
        let admin = root.appending("admin")
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try provider.policy(
            flow: flow, domain: domain, apps: ["com.example.mail", "com.example.calendar"], issuerOnly: issuerOnly
        )
        .write(toFile: admin + "/identity.json", atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(
            root: root,
            arguments: ["--identity-poll-delay", "0.05", "--identity-browser", try provider.browserProgram()],
            environment: environment)
        let client = try await daemon.client()
        try await client.initialize(passcode: passcode)
        try await client.unlock(passcode: passcode)
        await client.close()
        return daemon
    }

    static func cordon(_ daemon: DaemonProcess, _ arguments: [String]) async throws -> CommandResult {
        try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath] + arguments)
    }

    /// A refused command: its exit status, its error line and its hint.
    static func expectRefused(_ result: CommandResult, _ message: String, hint: String) {
        #expect(result.status != 0)
        #expect(result.stderr.contains("cordon: error: \(message)"), "\(result.stderr)")
        #expect(result.stderr.contains("hint: \(hint)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }

    /// Runs `cordon login` while a client joins the same sign-in to read the code, and answers it at
    /// the provider with `action`; the command's result and the code.
    static func login(_ daemon: DaemonProcess, _ provider: IdentityProviderProcess, action: String) async throws
        -> (CommandResult, IdentityPrompt)
    {
        let login = Task { try await cordon(daemon, ["login"]) }
        let watcher = try await daemon.client()
        let (prompts, shown) = AsyncStream<IdentityPrompt>.makeStream()
        let joined = Task { try await watcher.signIn(provider: "local") { shown.yield($0) } }
        var iterator = prompts.makeAsyncIterator()
        let prompt = try #require(await iterator.next())
        // The user enters the code the command printed (the watcher saw the same one).
        try await provider.admin("/admin/device", [("user_code", prompt.userCode), ("action", action)])
        let result = try await login.value
        _ = await joined.result
        await watcher.close()
        return (result, prompt)
    }

    /// A provider named by its issuer alone: `cordon login` signs in with the discovered endpoints,
    /// `cordon identity status` shows them (and the user of the ID token verified with the
    /// discovered JWKS); a discovery document naming another issuer is refused at step `discovery`.
    @Test func loginWithADiscoveredProviderAndAWrongIssuerRefused() async throws {
        let provider = try IdentityProviderProcess()
        try await provider.admin("/admin/config", [("device_id_token", "1"), ("discovery_wrong_issuer", "1")])
        let daemon = try await Self.started(provider, flow: "device", issuerOnly: true)
        let refused = try await Self.cordon(daemon, ["login"])
        Self.expectRefused(
            refused,
            "the sign-in with local failed at discovery: local: discovery: the document's /issuer is "
                + "\"https://idp.attacker.example\", not the configured \"\(provider.base)\"",
            hint: "check the network and `cordon identity status`, then `cordon login` again")
        try await provider.admin("/admin/config", [("discovery_wrong_issuer", "0")])
        let (login, _) = try await Self.login(daemon, provider, action: "approve")
        #expect(login.status == 0, "\(login.stderr)")
        let status = try await Self.cordon(daemon, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains("yes (alice)"), "\(status.stdout)")
        #expect(
            status.stdout.contains(
                "local: endpoints from \(provider.base)/.well-known/openid-configuration and the policy:"),
            "\(status.stdout)")
        #expect(status.stdout.contains("  token                \(provider.base)/token\n"), "\(status.stdout)")
        #expect(status.stdout.contains("  jwks                 \(provider.base)/jwks\n"), "\(status.stdout)")
        try await daemon.stop()
    }

    @Test func loginWithTheDeviceGrantStatusAndLogoutThroughTheRealDaemon() async throws {
        let provider = try IdentityProviderProcess()
        let daemon = try await Self.started(provider, flow: "device")
        defer { daemon.cleanUp() }
        var status = try await Self.cordon(daemon, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains("local"), "\(status.stderr)")
        // An app asks first; `cordon login` joins its sign-in and prints the code.
        let mail = try await CordonApp.connect(appId: "com.example.mail", socketPath: daemon.socketPath)
        let token = Task { try await mail.identity.token(for: Self.domain) }
        let (login, prompt) = try await Self.login(daemon, provider, action: "approve")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout.contains(
                "to sign in to local, open \(prompt.verificationURIComplete ?? prompt.verificationURI) and enter the code \(prompt.userCode)"
            ), "\(login.stdout)")
        #expect(login.stdout.contains("signed in to local (token until "), "\(login.stdout)")
        let issued = try await token.value
        #expect(issued.provider == "local" && !issued.accessToken.isEmpty)
        // Status: the session, never the token (table or JSON).
        status = try await Self.cordon(daemon, ["identity", "status"])
        #expect(status.status == 0 && status.stdout.contains(Self.domain) && status.stdout.contains("yes"))
        #expect(!status.stdout.contains(issued.accessToken))
        let json = try await Self.cordon(daemon, ["identity", "status", "--json"])
        #expect(json.status == 0 && json.stdout.contains("\"signedInAt\"") && !json.stdout.contains(issued.accessToken))
        // Logout revokes at the provider and deletes the session.
        let logout = try await Self.cordon(daemon, ["logout", "--identity"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(
            logout.stdout == "signed out of local: 1 session deleted, revoked at the provider\n", "\(logout.stdout)")
        status = try await Self.cordon(daemon, ["identity", "status"])
        #expect(status.stdout.contains("local") && !status.stdout.contains(" yes"), "\(status.stdout)")
        // Refusals print the error and a hint.
        Self.expectRefused(
            try await Self.cordon(daemon, ["login", "--provider", "nope"]), "no identity provider nope (known: local)",
            hint: "give one with `--provider`")
        // A denied sign-in: the code was printed, then the error and its hint.
        let (denied, _) = try await Self.login(daemon, provider, action: "deny")
        #expect(denied.stdout.hasPrefix("to sign in to local, open "), "\(denied.stdout)")
        Self.expectRefused(
            CommandResult(status: denied.status, stdout: "", stderr: denied.stderr),
            "the sign-in with local failed at token: local: token: the authorization was denied",
            hint: "check the network and `cordon identity status`, then `cordon login` again")
        let client = try await daemon.client()
        try await client.lock()
        await client.close()
        let locked = try await Self.cordon(daemon, ["login"])
        #expect(locked.status != 0)
        #expect(locked.stderr.contains("cordon: error: no sign-in and no token while the container is locked"))
        #expect(locked.stderr.contains("hint: "), "\(locked.stderr)")
        await mail.close()
    }

    /// An app's `GetToken` starts the device grant with no terminal watching: the code reaches the
    /// user as a desktop notification (a real notification server on a private session bus), the
    /// user enters it at the provider, the app gets its token, and the notification is withdrawn.
    @Test func anImplicitSignInShowsTheCodeAsADesktopNotification() async throws {
        let notifications = try await FakeNotificationServer()
        defer { notifications.cleanUp() }
        let provider = try IdentityProviderProcess()
        let daemon = try await Self.started(
            provider, flow: "device", environment: ["CORDON_SESSION_BUS_ADDRESS": notifications.address])
        defer { daemon.cleanUp() }
        let mail = try await CordonApp.connect(appId: "com.example.mail", socketPath: daemon.socketPath)
        let token = Task { try await mail.identity.token(for: Self.domain) }
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
        let issued = try await token.value
        #expect(issued.provider == "local" && !issued.accessToken.isEmpty)
        #expect(!shown.contains(issued.accessToken))
        try await eventually("the notification is withdrawn once signed in") {
            notifications.calls.contains { $0.contains(" CloseNotification ") }
        }
        await mail.close()
    }

    @Test func theCodeFlowOpensTheConfiguredBrowserAndLogoutNamesWhatItDid() async throws {
        let provider = try IdentityProviderProcess()
        let daemon = try await Self.started(provider, flow: "authorizationCode")
        defer { daemon.cleanUp() }
        // The agent opens the authorization URL with the browser stand-in, which follows the redirect.
        let login = try await Self.cordon(daemon, ["login"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.hasPrefix("signed in to local (token until "), "\(login.stdout)")
        let status = try await Self.cordon(daemon, ["identity", "status"])
        #expect(status.stdout.contains("authorizationCode") && status.stdout.contains(Self.domain))
        let logout = try await Self.cordon(daemon, ["logout", "--identity"])
        #expect(
            logout.stdout == "signed out of local: 1 session deleted, revoked at the provider\n", "\(logout.stdout)")
        let again = try await Self.cordon(daemon, ["logout", "--identity"])
        #expect(again.stdout == "not signed in to any identity provider\n", "\(again.stdout)")
    }
}
