import CordonIdentity
import CordonPolicy
import NIOCore

/// OpenID Connect Discovery 1.0 for the providers the policy names by their issuer
/// (docs/ARCHITECTURE.md, "Identity"): before the first sign-in or refresh that needs an endpoint
/// the policy does not give, the agent GETs `<issuer>/.well-known/openid-configuration` off the
/// loop, validates it with `OpenIDDiscovery` and keeps what it names for the agent's life (until
/// the policy changes). One fetch per provider at a time: every caller joins it. A failed fetch
/// is not kept, so the next sign-in tries again; endpoints that later fail are not a reason to
/// fetch again (a policy reload or a restart is).
extension IdentityComponent {
    /// The endpoints `entry` gives.
    static func endpoints(of entry: OAuthProviderEntry) -> ProviderEndpoints {
        ProviderEndpoints(
            deviceAuthorization: entry.deviceAuthorizationEndpoint, authorization: entry.authorizationEndpoint,
            token: entry.tokenEndpoint, revocation: entry.revocationEndpoint, jwks: entry.jwksURI)
    }

    /// The sign-in flow of `entry`.
    static func flow(of entry: OAuthProviderEntry) -> SignInFlow {
        entry.flow == .device ? .device : .authorizationCode
    }

    /// The OAuth provider `entry` with `endpoints` (the policy's, filled from discovery), checked:
    /// every endpoint acceptable, the flow's and the token endpoint present; an OpenID provider
    /// (issuer and JWKS) verifies its ID tokens.
    static func oauthProvider(_ entry: OAuthProviderEntry, endpoints: ProviderEndpoints) throws(IdentityError)
        -> ConfiguredProvider
    {
        guard let token = endpoints.token else {
            throw .malformedResponse(
                provider: entry.name, step: .discovery, reason: "the provider has no token endpoint")
        }
        let configuration = ProviderConfiguration(
            name: entry.name, clientID: entry.clientID, scopes: entry.scopes, flow: flow(of: entry),
            deviceAuthorizationEndpoint: endpoints.deviceAuthorization, authorizationEndpoint: endpoints.authorization,
            tokenEndpoint: token, revocationEndpoint: endpoints.revocation)
        try configuration.validate()
        var oidc: OIDCSettings?
        if let jwks = endpoints.jwks, let issuer = entry.issuer {
            if let problem = EndpointRule.problem(jwks) {
                throw .insecureEndpoint(provider: entry.name, step: .idToken, reason: problem)
            }
            oidc = OIDCSettings(issuer: issuer, clientID: entry.clientID, jwksURI: jwks)
        }
        return .oauth(configuration, oidc: oidc)
    }

    /// `provider` with its endpoints: as it is, or (`.discovering`) once its issuer's discovery
    /// document gave them; the typed error (step `discovery`) when it could not.
    func resolved(_ provider: ConfiguredProvider) -> EventLoopFuture<Result<ConfiguredProvider, IdentityError>> {
        guard case .discovering(let entry) = provider else { return host.loop.makeSucceededFuture(.success(provider)) }
        return discover(entry).map { result in
            result.flatMap { discovered -> Result<ConfiguredProvider, IdentityError> in
                do throws(IdentityError) {
                    return .success(
                        try Self.oauthProvider(entry, endpoints: Self.endpoints(of: entry).filled(from: discovered)))
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// The endpoints the discovery document of `entry`'s issuer names: the cached ones, the fetch
    /// running for the provider (joined), or a new fetch. Audited (never a token: the document
    /// holds none).
    private func discover(_ entry: OAuthProviderEntry) -> DiscoveryResult {
        let name = entry.name
        guard let issuer = entry.issuer else {
            return host.loop.makeSucceededFuture(
                .failure(.malformedResponse(provider: name, step: .discovery, reason: "the provider has no issuer")))
        }
        if let cached = discovered[name], cached.issuer == issuer {
            return host.loop.makeSucceededFuture(.success(cached.endpoints))
        }
        if let running = discoveryFetches[name], running.issuer == issuer { return running.result }
        let (transport, flow, explicit) = (transport, Self.flow(of: entry), Self.endpoints(of: entry))
        let url = OpenIDDiscovery.configurationURL(issuer: issuer)
        let fetch = host.loop.makeFutureWithTask { () async -> Result<ProviderEndpoints, IdentityError> in
            do throws(IdentityError) {
                let answer = try await transport.get(url, provider: name, step: .discovery)
                return .success(
                    try OpenIDDiscovery.endpoints(
                        status: answer.status, body: answer.body, provider: name, issuer: issuer, flow: flow,
                        explicit: explicit))
            } catch {
                return .failure(error)
            }
        }
        discoveryFetches[name] = (issuer, fetch)
        fetch.assumeIsolated().whenSuccess { [self] result in
            if discoveryFetches[name]?.result === fetch { discoveryFetches[name] = nil }
            switch result {
            case .success(let endpoints):
                discovered[name] = (issuer, endpoints)
                audit(nil, "identity.discovery", outcome: "allow", reason: "\(name): the endpoints of \(issuer)")
            case .failure(let error):
                audit(nil, "identity.discovery", outcome: "failed", reason: error.description)
            }
        }
        return fetch
    }
}
