import CordonIdentity
import CordonPolicy

/// A provider of the policy in force as `IdentityComponent` drives it (docs/ARCHITECTURE.md,
/// "Identity"): an OAuth 2.0 provider (with the OpenID Connect settings its ID tokens are verified
/// with, when it has a JWKS), an OpenID provider whose endpoints are still to be discovered from
/// its issuer, or a CPA authorization provider.
enum ConfiguredProvider: Sendable, Equatable {
    case oauth(ProviderConfiguration, oidc: OIDCSettings?)
    /// The policy's entry, with an issuer, lacking an endpoint discovery gives (none cached yet).
    case discovering(OAuthProviderEntry)
    case cpa(CPAProviderConfiguration, mode: CPASignIn.Mode)

    /// The provider's name in the policy.
    var name: String {
        switch self {
        case .oauth(let configuration, _): configuration.name
        case .discovering(let entry): entry.name
        case .cpa(let configuration, _): configuration.name
        }
    }

    /// How `Status` names the way it signs in: `device`, `authorizationCode`, `cpaUser` or `cpaClient`.
    var flowName: String {
        switch self {
        case .oauth(let configuration, _): configuration.flow.rawValue
        case .discovering(let entry): entry.flow.rawValue
        case .cpa(_, let mode): mode == .user ? "cpaUser" : "cpaClient"
        }
    }

    /// The OAuth configuration, nil for CPA and before discovery.
    var oauth: ProviderConfiguration? {
        if case .oauth(let configuration, _) = self { return configuration }
        return nil
    }
}

/// What an OpenID Connect provider's ID tokens are verified with: the issuer, the client id (the
/// audience) and the JWKS endpoint the agent fetches the keys from.
struct OIDCSettings: Sendable, Equatable {
    var issuer: String
    var clientID: String
    var jwksURI: String
}
