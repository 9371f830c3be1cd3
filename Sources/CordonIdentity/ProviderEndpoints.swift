/// The endpoints of an OAuth 2.0 / OpenID Connect provider, each optional: the ones the policy
/// gives, the ones an issuer's discovery document names (``OpenIDDiscovery``), or the two merged
/// (docs/ARCHITECTURE.md, "Identity").
public struct ProviderEndpoints: Sendable, Equatable {
    /// The device authorization endpoint (RFC 8628 §3.1).
    public var deviceAuthorization: String?
    /// The authorization endpoint (RFC 6749 §3.1).
    public var authorization: String?
    /// The token endpoint (RFC 6749 §3.2).
    public var token: String?
    /// The revocation endpoint (RFC 7009 §2).
    public var revocation: String?
    /// The JWKS the issuer's ID tokens verify with (OpenID Connect Discovery 1.0 §3, `jwks_uri`).
    public var jwks: String?

    public init(
        deviceAuthorization: String? = nil, authorization: String? = nil, token: String? = nil,
        revocation: String? = nil, jwks: String? = nil
    ) {
        self.deviceAuthorization = deviceAuthorization
        self.authorization = authorization
        self.token = token
        self.revocation = revocation
        self.jwks = jwks
    }

    /// These endpoints, with each one they lack taken from `discovered`: an explicit endpoint
    /// always overrides the discovered one.
    public func filled(from discovered: ProviderEndpoints) -> ProviderEndpoints {
        ProviderEndpoints(
            deviceAuthorization: deviceAuthorization ?? discovered.deviceAuthorization,
            authorization: authorization ?? discovered.authorization, token: token ?? discovered.token,
            revocation: revocation ?? discovered.revocation, jwks: jwks ?? discovered.jwks)
    }

    /// The endpoint a sign-in with `flow` starts at.
    public func flowEndpoint(_ flow: SignInFlow) -> String? {
        flow == .device ? deviceAuthorization : authorization
    }

    /// Each endpoint's member in a discovery document (OpenID Connect Discovery 1.0 §3, RFC 8414
    /// §2 for the device and revocation endpoints), in the document's order.
    static var discoveryMembers: [(member: String, endpoint: WritableKeyPath<ProviderEndpoints, String?>)] {
        [
            ("authorization_endpoint", \.authorization), ("device_authorization_endpoint", \.deviceAuthorization),
            ("token_endpoint", \.token), ("revocation_endpoint", \.revocation), ("jwks_uri", \.jwks),
        ]
    }
}
