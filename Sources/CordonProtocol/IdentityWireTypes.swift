/// `io.cordon.Identity.GetToken`: an access token for `domain` (docs/ARCHITECTURE.md, "Identity").
public struct IdentityTokenParameters: Codable, Sendable, Equatable {
    public var domain: String

    public init(domain: String) {
        self.domain = domain
    }
}

/// The reply of `GetToken`: the access token of the domain's provider and when it expires.
public struct IdentityTokenReply: Codable, Sendable, Equatable {
    public var domain: String
    public var provider: String
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Unix time the access token expires.
    public var expiresAt: Double

    public init(domain: String, provider: String, accessToken: String, tokenType: String, expiresAt: Double) {
        self.domain = domain
        self.provider = provider
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
    }
}

/// `io.cordon.Identity.SignIn` and `SignOut`: one provider, or (nil) the only one (`SignIn`) or
/// every one (`SignOut`).
public struct IdentityProviderParameters: Codable, Sendable, Equatable {
    public var provider: String?

    public init(provider: String? = nil) {
        self.provider = provider
    }
}

/// What the user is shown for a device sign-in: open `verificationURI` and enter `userCode`.
public struct IdentityPrompt: Codable, Sendable, Equatable {
    public var provider: String
    public var userCode: String
    public var verificationURI: String
    /// The URI with the code in it, when the provider gives one.
    public var verificationURIComplete: String?
    /// Unix time the code expires.
    public var expiresAt: Double

    public init(
        provider: String, userCode: String, verificationURI: String, verificationURIComplete: String?,
        expiresAt: Double
    ) {
        self.provider = provider
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresAt = expiresAt
    }
}

/// A reply of `SignIn`: with `more`, first the device prompt (`prompt` set, `continues`), then the
/// outcome (`expiresAt` set): never a token.
public struct IdentitySignInReply: Codable, Sendable, Equatable {
    public var provider: String
    public var prompt: IdentityPrompt?
    /// Unix time the new access token expires (the final reply).
    public var expiresAt: Double?

    public init(provider: String, prompt: IdentityPrompt? = nil, expiresAt: Double? = nil) {
        self.provider = provider
        self.prompt = prompt
        self.expiresAt = expiresAt
    }
}

/// One provider signed out by `SignOut`.
public struct IdentitySignedOut: Codable, Sendable, Equatable {
    public var provider: String
    /// How many sessions (domains) were deleted.
    public var sessions: Int
    /// Whether the provider's revocation endpoint (RFC 7009) accepted the tokens.
    public var revoked: Bool
    /// Why they were not revoked (no endpoint, unreachable, the key not held), when not.
    public var revocationProblem: String?

    public init(provider: String, sessions: Int, revoked: Bool, revocationProblem: String? = nil) {
        self.provider = provider
        self.sessions = sessions
        self.revoked = revoked
        self.revocationProblem = revocationProblem
    }
}

/// The reply of `SignOut`.
public struct IdentitySignOutReply: Codable, Sendable, Equatable {
    public var providers: [IdentitySignedOut]

    public init(providers: [IdentitySignedOut]) {
        self.providers = providers
    }
}

/// One domain's session as `Status` shows it: never a token.
public struct IdentitySessionStatus: Codable, Sendable, Equatable {
    public var domain: String
    /// The signed-in user's name: a verified ID token's `preferred_username` (else `sub`), or a
    /// CPA user token's `user_name`; nil when the provider did not say.
    public var user: String?
    /// A CPA domain's name to show (`domain_display_name`).
    public var domainDisplayName: String?
    /// Unix time the access token expires.
    public var expiresAt: Double
    public var signedInAt: Double
    /// Unix time the provider last issued or refreshed the tokens.
    public var confirmedAt: Double

    public init(
        domain: String, user: String?, domainDisplayName: String? = nil, expiresAt: Double, signedInAt: Double,
        confirmedAt: Double
    ) {
        self.domain = domain
        self.user = user
        self.domainDisplayName = domainDisplayName
        self.expiresAt = expiresAt
        self.signedInAt = signedInAt
        self.confirmedAt = confirmedAt
    }
}

/// One provider as `Status` shows it.
public struct IdentityProviderStatus: Codable, Sendable, Equatable {
    public var name: String
    /// `device` or `authorizationCode` (OAuth 2.0), `cpaUser` or `cpaClient` (CPA).
    public var flow: String
    /// The domains the policy gives this provider.
    public var domains: [String]
    /// Whether a sign-in or refresh is running now.
    public var signingIn: Bool
    /// The stored sessions, by domain; empty when signed out.
    public var sessions: [IdentitySessionStatus]
    /// An OAuth provider's endpoints in use (nil for CPA).
    public var endpoints: IdentityEndpoints?

    public init(
        name: String, flow: String, domains: [String], signingIn: Bool, sessions: [IdentitySessionStatus],
        endpoints: IdentityEndpoints? = nil
    ) {
        self.name = name
        self.flow = flow
        self.domains = domains
        self.signingIn = signingIn
        self.sessions = sessions
        self.endpoints = endpoints
    }
}

/// An OAuth provider's endpoints as `Status` shows them: the policy's, filled from the issuer's
/// discovery document once it was read (OpenID Connect Discovery 1.0). URLs only, no secret.
public struct IdentityEndpoints: Codable, Sendable, Equatable {
    public var deviceAuthorization: String?
    public var authorization: String?
    public var token: String?
    public var revocation: String?
    public var jwks: String?
    /// The discovery document's URL when some of these came from it; nil when the policy gives
    /// them all, or the document has not been read yet.
    public var discovery: String?

    public init(
        deviceAuthorization: String? = nil, authorization: String? = nil, token: String? = nil,
        revocation: String? = nil, jwks: String? = nil, discovery: String? = nil
    ) {
        self.deviceAuthorization = deviceAuthorization
        self.authorization = authorization
        self.token = token
        self.revocation = revocation
        self.jwks = jwks
        self.discovery = discovery
    }
}

/// The reply of `Status`.
public struct IdentityStatusReply: Codable, Sendable, Equatable {
    public var providers: [IdentityProviderStatus]

    public init(providers: [IdentityProviderStatus]) {
        self.providers = providers
    }
}
