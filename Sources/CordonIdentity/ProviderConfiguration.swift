/// The sign-in flow a provider is used with.
public enum SignInFlow: String, Sendable, Equatable, CaseIterable, Codable {
    /// The device authorization grant (RFC 8628): a user code shown, entered on another screen.
    case device
    /// The authorization code grant with PKCE through a loopback redirect (RFC 8252, RFC 7636).
    case authorizationCode
}

/// An OAuth 2.0 / OpenID Connect provider as the agent uses it: its endpoints, client id, scopes and
/// flow (the policy's `identity.providers`, docs/ARCHITECTURE.md "Identity").
public struct ProviderConfiguration: Sendable, Equatable {
    public var name: String
    public var clientID: String
    public var scopes: [String]
    public var flow: SignInFlow
    public var deviceAuthorizationEndpoint: String?
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String
    public var revocationEndpoint: String?

    public init(
        name: String, clientID: String, scopes: [String], flow: SignInFlow, deviceAuthorizationEndpoint: String?,
        authorizationEndpoint: String?, tokenEndpoint: String, revocationEndpoint: String?
    ) {
        self.name = name
        self.clientID = clientID
        self.scopes = scopes
        self.flow = flow
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
    }

    /// Checks that every endpoint is acceptable (``EndpointRule``) and the flow has the endpoint it needs.
    public func validate() throws(IdentityError) {
        let endpoints: [(String?, IdentityStep)] = [
            (deviceAuthorizationEndpoint, .deviceAuthorization), (authorizationEndpoint, .authorization),
            (tokenEndpoint, .token), (revocationEndpoint, .revocation),
        ]
        for case (let url?, let step) in endpoints {
            if let problem = EndpointRule.problem(url) {
                throw .insecureEndpoint(provider: name, step: step, reason: problem)
            }
        }
        switch flow {
        case .device where deviceAuthorizationEndpoint == nil:
            throw .insecureEndpoint(
                provider: name, step: .deviceAuthorization,
                reason: "the device flow needs a device authorization endpoint")
        case .authorizationCode where authorizationEndpoint == nil:
            throw .insecureEndpoint(
                provider: name, step: .authorization,
                reason: "the authorization code flow needs an authorization endpoint")
        default: break
        }
    }

    /// A refresh of `refreshToken` (RFC 6749 §6).
    public func refreshRequest(_ refreshToken: String) -> ProviderRequest {
        var form = [FormField("grant_type", "refresh_token"), FormField("refresh_token", refreshToken)]
        form.append(FormField("client_id", clientID))
        return ProviderRequest(url: tokenEndpoint, step: .refresh, form: form)
    }

    /// The revocation of `token` (RFC 7009 §2.1), or nil when the provider has no revocation endpoint.
    public func revocationRequest(_ token: String, hint: String) -> ProviderRequest? {
        revocationEndpoint.map {
            ProviderRequest(
                url: $0, step: .revocation,
                form: [FormField("token", token), FormField("token_type_hint", hint), FormField("client_id", clientID)])
        }
    }

    /// What a refresh answered: the rotated tokens (``TokenSet/refreshed(with:)``), or
    /// ``IdentityError/refreshRefused`` for `invalid_grant` (a new sign-in is needed).
    public func refreshed(_ previous: TokenSet, status: Int, body: [UInt8], now: Double) throws(IdentityError)
        -> TokenSet
    {
        switch try TokenResponseParser.parse(status: status, body: body, provider: name, step: .refresh, now: now) {
        case .tokens(let tokens): return previous.refreshed(with: tokens)
        case .error(let code, _) where code == "invalid_grant": throw .refreshRefused(provider: name)
        case .error(let code, let description):
            throw .providerError(provider: name, step: .refresh, error: code, description: description, status: status)
        }
    }
}
