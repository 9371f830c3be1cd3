/// The sign-in flow an OAuth provider is used with.
public enum IdentityFlow: String, Sendable, Hashable, CaseIterable {
    case device
    case authorizationCode
}

/// One `identity.providers` entry: an OAuth 2.0 / OpenID Connect provider.
public struct OAuthProviderEntry: Sendable, Hashable {
    public var name: String
    /// The OpenID issuer: the agent discovers the endpoints the entry does not give from
    /// `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0).
    public var issuer: String?
    public var deviceAuthorizationEndpoint: String?
    public var authorizationEndpoint: String?
    /// The token endpoint; nil only with an `issuer` (then discovered).
    public var tokenEndpoint: String?
    public var revocationEndpoint: String?
    public var jwksURI: String?
    public var clientID: String
    public var scopes: [String]
    public var flow: IdentityFlow

    public init(
        name: String, issuer: String? = nil, deviceAuthorizationEndpoint: String? = nil,
        authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, revocationEndpoint: String? = nil,
        jwksURI: String? = nil, clientID: String, scopes: [String], flow: IdentityFlow
    ) {
        self.name = name
        self.issuer = issuer
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.jwksURI = jwksURI
        self.clientID = clientID
        self.scopes = scopes
        self.flow = flow
    }

    /// The endpoints as the file spells them, in order, with their keys.
    var endpointMembers: [(String, String)] {
        [
            ("deviceAuthorization", deviceAuthorizationEndpoint), ("authorization", authorizationEndpoint),
            ("token", tokenEndpoint), ("revocation", revocationEndpoint), ("jwks", jwksURI),
        ].compactMap { key, value in value.map { (key, $0) } }
    }
}

/// Which CPA token apps get (ETSI TS 103 407 §4): a client (anonymous) token, or a user token
/// after the user pairs the device with a code.
public enum CPATokenMode: String, Sendable, Hashable, CaseIterable {
    case client
    case user
}

/// One `identity.cpaProviders` entry: a CPA authorization provider (ETSI TS 103 407).
public struct CPAProviderEntry: Sendable, Hashable {
    public var name: String
    public var baseURL: String
    public var domains: [String]
    /// The token apps get for the provider's domains; `user` when the file does not say.
    public var mode: CPATokenMode

    public init(name: String, baseURL: String, domains: [String], mode: CPATokenMode = .user) {
        self.name = name
        self.baseURL = baseURL
        self.domains = domains
        self.mode = mode
    }
}

/// One `identity.domains` entry: a domain and the provider that signs in for it.
public struct IdentityDomainEntry: Sendable, Hashable {
    public var domain: String
    public var provider: String

    public init(domain: String, provider: String) {
        self.domain = domain
        self.provider = provider
    }
}

/// One `identity.accessGroups` entry: apps that share the tokens of the group's domains.
public struct AccessGroupEntry: Sendable, Hashable {
    public var name: String
    public var apps: [String]
    public var domains: [String]

    public init(name: String, apps: [String], domains: [String]) {
        self.name = name
        self.apps = apps
        self.domains = domains
    }
}

extension OAuthProviderEntry: PolicyListElement {
    public var listElementJSON: String {
        var members = [("name", PolicyFormat.quoted(name))]
        if let issuer { members.append(("issuer", PolicyFormat.quoted(issuer))) }
        if issuer == nil || !endpointMembers.isEmpty {
            members.append(("endpoints", IdentityJSON.object(endpointMembers.map { ($0, PolicyFormat.quoted($1)) })))
        }
        members += [
            ("clientId", PolicyFormat.quoted(clientID)), ("scopes", IdentityJSON.strings(scopes)),
            ("flow", PolicyFormat.quoted(flow.rawValue)),
        ]
        return IdentityJSON.object(members)
    }
}

extension CPAProviderEntry: PolicyListElement {
    public var listElementJSON: String {
        var members = [
            ("name", PolicyFormat.quoted(name)), ("baseURL", PolicyFormat.quoted(baseURL)),
            ("domains", IdentityJSON.strings(domains)),
        ]
        if mode != .user { members.append(("mode", PolicyFormat.quoted(mode.rawValue))) }
        return IdentityJSON.object(members)
    }
}

extension IdentityDomainEntry: PolicyListElement {
    public var listElementJSON: String {
        IdentityJSON.object([("domain", PolicyFormat.quoted(domain)), ("provider", PolicyFormat.quoted(provider))])
    }
}

extension AccessGroupEntry: PolicyListElement {
    public var listElementJSON: String {
        IdentityJSON.object([
            ("name", PolicyFormat.quoted(name)), ("apps", IdentityJSON.strings(apps)),
            ("domains", IdentityJSON.strings(domains)),
        ])
    }
}

/// JSON text of the `identity` entries, in the file's order.
enum IdentityJSON {
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { PolicyFormat.quoted($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }

    static func strings(_ items: [String]) -> String {
        "[" + items.map(PolicyFormat.quoted).joined(separator: ", ") + "]"
    }
}
