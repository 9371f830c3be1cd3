/// The step of a sign-in or refresh an error happened in, named in every ``IdentityError``.
public enum IdentityStep: String, Sendable, Equatable, CaseIterable {
    /// The device authorization request (RFC 8628 §3.1–3.2).
    case deviceAuthorization
    /// The browser's authorization request and its loopback redirect (RFC 8252 §7.3).
    case authorization
    /// The token request: device code, authorization code or refresh (RFC 6749 §5); CPA's client
    /// and user token requests (ETSI TS 103 407 §8.4).
    case token
    /// A refresh of the access token (RFC 6749 §6).
    case refresh
    /// Revocation at sign-out (RFC 7009).
    case revocation
    /// CPA client registration at `/register` (ETSI TS 103 407 §8.2).
    case registration
    /// CPA association at `/associate`: the device code and user code (ETSI TS 103 407 §8.3).
    case association
    /// Verification of an OpenID Connect ID token against the issuer's JWKS (OpenID Connect Core §3.1.3.7).
    case idToken
    /// The issuer's discovery document at `<issuer>/.well-known/openid-configuration` (OpenID
    /// Connect Discovery 1.0 §4).
    case discovery
}

/// Why a sign-in, refresh or revocation failed: always the provider and the step, never a token,
/// refresh token, authorization code, code verifier or client secret (docs/ARCHITECTURE.md,
/// "Identity").
public enum IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider's answer is not what the protocol says (not JSON, a member missing or of the
    /// wrong type, a token without `expires_in`).
    case malformedResponse(provider: String, step: IdentityStep, reason: String)
    /// The user (or the provider) refused the authorization (`access_denied`).
    case denied(provider: String, step: IdentityStep)
    /// The device code or the flow expired before the user approved (`expired_token`).
    case expired(provider: String, step: IdentityStep)
    /// The sign-in was cancelled (by the user or because the container locked).
    case cancelled(provider: String, step: IdentityStep)
    /// The loopback redirect carried a `state` other than the one sent (RFC 6749 §10.12).
    case stateMismatch(provider: String)
    /// The provider answered an OAuth error (`error` member) other than the ones above, with the
    /// HTTP `status` it came with (nil: not over HTTP, as a browser redirect's).
    case providerError(provider: String, step: IdentityStep, error: String, description: String?, status: Int? = nil)
    /// A refresh token was refused (`invalid_grant`): the session needs a new sign-in.
    case refreshRefused(provider: String)
    /// An endpoint or redirect is not acceptable (not https and not loopback, another origin).
    case insecureEndpoint(provider: String, step: IdentityStep, reason: String)
    /// The provider could not be reached or did not answer in time (no network, refused, timeout).
    case unreachable(provider: String, step: IdentityStep, reason: String)
    /// The provider answered a server error (HTTP 5xx) without a protocol error in its body.
    case serverError(provider: String, step: IdentityStep, status: Int)
    /// The ID token does not verify: its signature against the issuer's JWKS, or a claim (`iss`,
    /// `aud`, `exp`, `iat`, `nonce`); or the JWKS itself is not usable. `reason` never holds the
    /// token or a claim's value.
    case invalidIDToken(provider: String, reason: String)
    /// The discovery document names another issuer than the one configured (OpenID Connect
    /// Discovery 1.0 §4.3): refused, as the defence against a provider mix-up.
    case issuerMismatch(provider: String, expected: String, found: String)

    /// The provider named in the error.
    public var provider: String {
        switch self {
        case .malformedResponse(let provider, _, _), .denied(let provider, _), .expired(let provider, _),
            .cancelled(let provider, _), .stateMismatch(let provider), .providerError(let provider, _, _, _, _),
            .refreshRefused(let provider), .insecureEndpoint(let provider, _, _), .unreachable(let provider, _, _),
            .serverError(let provider, _, _), .invalidIDToken(let provider, _), .issuerMismatch(let provider, _, _):
            provider
        }
    }

    /// The step named in the error.
    public var step: IdentityStep {
        switch self {
        case .malformedResponse(_, let step, _), .denied(_, let step), .expired(_, let step), .cancelled(_, let step),
            .providerError(_, let step, _, _, _), .insecureEndpoint(_, let step, _), .unreachable(_, let step, _),
            .serverError(_, let step, _):
            step
        case .stateMismatch: .authorization
        case .refreshRefused: .refresh
        case .invalidIDToken: .idToken
        case .issuerMismatch: .discovery
        }
    }

    /// `provider: step: cause` (logs).
    public var description: String {
        "\(provider): \(step.rawValue): \(cause)"
    }

    /// What went wrong, without the provider and the step (an error's `reason` names those apart):
    /// the cause as the system or the provider reported it, one clause.
    public var cause: String {
        switch self {
        case .malformedResponse(_, _, let reason): "the response is malformed: \(reason)"
        case .denied: "the authorization was denied"
        case .expired: "the sign-in expired"
        case .cancelled: "the sign-in was cancelled"
        case .stateMismatch: "the redirect's state does not match"
        case .providerError(_, _, let error, let description, let status):
            "the provider answered " + (status.map { "HTTP \($0) with error " } ?? "error ") + error
                + (description.map { " (\($0.prefix(300)))" } ?? "")
        case .refreshRefused: "the refresh token was refused"
        case .insecureEndpoint(_, _, let reason): reason
        case .unreachable(_, _, let reason): reason
        case .serverError(_, _, let status): "the provider answered HTTP \(status)"
        case .invalidIDToken(_, let reason): "the ID token is refused: \(reason)"
        case .issuerMismatch(_, let expected, let found):
            "the document's /issuer is \"\(found.prefix(200))\", not the configured \"\(expected)\""
        }
    }
}
