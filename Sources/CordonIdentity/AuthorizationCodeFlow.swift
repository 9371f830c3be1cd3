import Foundation

/// The authorization code grant with PKCE through a loopback redirect (RFC 8252 §7.3, RFC 7636)
/// as a state machine: the driver opens the browser, runs the one-shot listener on
/// `127.0.0.1:<ephemeral port>`, and feeds back the redirect's query and the token answer
/// (docs/ARCHITECTURE.md, "Identity").
public struct AuthorizationCodeFlow: Sendable {
    /// Where the flow is.
    public enum Phase: Sendable, Equatable {
        case idle
        case awaitingRedirect
        case awaitingToken
        case finished
    }

    public let provider: ProviderConfiguration
    /// `http://127.0.0.1:<port>/callback`.
    public let redirectURI: String
    /// The OpenID Connect `nonce` sent in the authorization request, when there is one: the ID
    /// token must carry it back (``IDTokenVerifier``).
    public let nonce: String?
    public private(set) var phase: Phase = .idle
    private let pkce: PKCE
    private let state: String

    /// A flow for `provider` redirecting to the listener on `port`; `random` gives 48 octets (32
    /// for the PKCE verifier, 16 for `state`); `nonce`, when given, is sent for the ID token
    /// (OpenID Connect Core §3.1.2.1).
    public init(provider: ProviderConfiguration, port: Int, random: [UInt8], nonce: String? = nil) {
        precondition(random.count == 48, "the flow takes 48 random octets")
        self.provider = provider
        self.nonce = nonce
        redirectURI = "http://127.0.0.1:\(port)/callback"
        pkce = PKCE(random: Array(random[0..<32]))
        state = Base64URL.encode(Array(random[32..<48]))
    }

    /// Starts the flow: the browser opened at the authorization request (RFC 6749 §4.1.1 with
    /// RFC 7636 §4.3).
    public mutating func start() -> [SignInAction] {
        guard phase == .idle, let endpoint = provider.authorizationEndpoint else {
            return fail(
                .insecureEndpoint(provider: provider.name, step: .authorization, reason: "no authorization endpoint"))
        }
        var query = [
            FormField("response_type", "code"), FormField("client_id", provider.clientID),
            FormField("redirect_uri", redirectURI),
        ]
        if !provider.scopes.isEmpty { query.append(FormField("scope", provider.scopes.joined(separator: " "))) }
        if let nonce { query.append(FormField("nonce", nonce)) }
        query += [
            FormField("state", state), FormField("code_challenge", pkce.challenge),
            FormField("code_challenge_method", PKCE.method),
        ]
        phase = .awaitingRedirect
        let separator = endpoint.contains("?") ? "&" : "?"
        return [.openBrowser(url: endpoint + separator + FormEncoding.encode(query))]
    }

    /// Feeds the request target the loopback listener received (`/callback?code=…&state=…`).
    public mutating func redirectReceived(target: String) -> [SignInAction] {
        guard phase == .awaitingRedirect else { return [] }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts[0] == "/callback", parts.count == 2, let fields = FormEncoding.decode(String(parts[1])) else {
            return fail(
                .malformedResponse(provider: provider.name, step: .authorization, reason: "the redirect has no query"))
        }
        func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }
        // The state is checked before anything else in the redirect is believed (RFC 6749 §10.12).
        guard let received = value("state"), received == state else {
            return fail(.stateMismatch(provider: provider.name))
        }
        if let error = value("error") {
            if error == "access_denied" { return fail(.denied(provider: provider.name, step: .authorization)) }
            return fail(
                .providerError(
                    provider: provider.name, step: .authorization, error: error,
                    description: value("error_description")))
        }
        guard let code = value("code"), !code.isEmpty else {
            return fail(
                .malformedResponse(provider: provider.name, step: .authorization, reason: "the redirect has no code"))
        }
        phase = .awaitingToken
        let request = ProviderRequest(
            url: provider.tokenEndpoint, step: .token,
            form: [
                FormField("grant_type", "authorization_code"), FormField("code", code),
                FormField("redirect_uri", redirectURI), FormField("client_id", provider.clientID),
                FormField("code_verifier", pkce.verifier),
            ])
        return [.send(request)]
    }

    /// Feeds the token endpoint's answer, received at `now`.
    public mutating func receive(status: Int, body: [UInt8], now: Double) -> [SignInAction] {
        guard phase == .awaitingToken else { return [] }
        do throws(IdentityError) {
            switch try TokenResponseParser.parse(
                status: status, body: body, provider: provider.name, step: .token, now: now)
            {
            case .tokens(let tokens):
                phase = .finished
                return [.finish(tokens)]
            case .error(let code, let description):
                throw .providerError(
                    provider: provider.name, step: .token, error: code, description: description, status: status)
            }
        } catch {
            return fail(error)
        }
    }

    /// The user cancelled, the listener timed out, or the container locked.
    public mutating func cancel() -> [SignInAction] {
        guard phase != .finished else { return [] }
        return fail(.cancelled(provider: provider.name, step: phase == .awaitingToken ? .token : .authorization))
    }

    private mutating func fail(_ error: IdentityError) -> [SignInAction] {
        phase = .finished
        return [.fail(error)]
    }
}
