import CordonProtocol

/// OpenID Connect Discovery 1.0 for a provider the policy names by its `issuer` (docs/ARCHITECTURE.md,
/// "Identity"): where the document is, whether a provider needs it, and the pure reading and
/// validation of the document. The driver GETs it and caches what this returns.
///
/// The document is believed only when it is a JSON object of at most 64 KiB whose `issuer` is
/// exactly the configured issuer (§4.3, the mix-up defence), whose endpoints are each https (or
/// http on a loopback host, ``EndpointRule``), and that names every endpoint the provider needs
/// and the policy does not give: `token_endpoint`, the flow's (`device_authorization_endpoint` or
/// `authorization_endpoint`) and `jwks_uri` (ID tokens are verified with it). Errors are
/// ``IdentityError``s at step ``IdentityStep/discovery`` naming the member by its JSON pointer.
public enum OpenIDDiscovery {
    /// The largest document read (``TokenResponseParser/maximumBody``, 64 KiB).
    public static let maximumBody = TokenResponseParser.maximumBody
    /// The path appended to the issuer (§4).
    public static let wellKnownPath = "/.well-known/openid-configuration"

    /// The document's URL for `issuer` (§4.1): the issuer with its path, less a terminating `/`,
    /// then `/.well-known/openid-configuration`.
    public static func configurationURL(issuer: String) -> String {
        var base = Substring(issuer)
        while base.hasSuffix("/") { base = base.dropLast() }
        return base + wellKnownPath
    }

    /// Whether a provider with an issuer, `flow` and the `explicit` endpoints of the policy needs
    /// discovery: it lacks the token endpoint, the flow's endpoint or the JWKS.
    public static func isNeeded(_ explicit: ProviderEndpoints, flow: SignInFlow) -> Bool {
        explicit.token == nil || explicit.flowEndpoint(flow) == nil || explicit.jwks == nil
    }

    /// The endpoints the document in `body` (HTTP `status`) names for `provider`, validated for
    /// `issuer`, the provider's `flow` and the endpoints the policy gives (`explicit`: those need
    /// not be in the document, and override it when merged with ``ProviderEndpoints/filled(from:)``).
    public static func endpoints(
        status: Int, body: [UInt8], provider: String, issuer: String, flow: SignInFlow, explicit: ProviderEndpoints
    ) throws(IdentityError) -> ProviderEndpoints {
        if status >= 500 { throw .serverError(provider: provider, step: .discovery, status: status) }
        guard status == 200 else {
            throw .malformedResponse(
                provider: provider, step: .discovery, reason: "the discovery document answered HTTP \(status)")
        }
        guard body.count <= maximumBody else {
            throw .malformedResponse(
                provider: provider, step: .discovery, reason: "the discovery document is over 64 KiB")
        }
        let document: JSONObject
        do {
            document = try JSONObject.parse(body, provider: provider, step: .discovery)
        } catch {
            throw .malformedResponse(
                provider: provider, step: .discovery, reason: "the discovery document is not a JSON object")
        }
        guard let found = document["issuer"] else {
            throw .malformedResponse(provider: provider, step: .discovery, reason: "/issuer is missing")
        }
        guard let named = found.stringValue else {
            throw .malformedResponse(provider: provider, step: .discovery, reason: "/issuer is not a string")
        }
        guard named == issuer else { throw .issuerMismatch(provider: provider, expected: issuer, found: named) }
        var discovered = ProviderEndpoints()
        for (member, endpoint) in ProviderEndpoints.discoveryMembers {
            guard let value = document[member], value != .null else { continue }
            guard let url = value.stringValue else {
                throw .malformedResponse(provider: provider, step: .discovery, reason: "/\(member) is not a string")
            }
            if let problem = EndpointRule.problem(url) {
                throw .insecureEndpoint(provider: provider, step: .discovery, reason: "/\(member): \(problem)")
            }
            discovered[keyPath: endpoint] = url
        }
        let merged = explicit.filled(from: discovered)
        let needed: [(String, String?)] = [
            ("token_endpoint", merged.token),
            (flow == .device ? "device_authorization_endpoint" : "authorization_endpoint", merged.flowEndpoint(flow)),
            ("jwks_uri", merged.jwks),
        ]
        for case (let member, nil) in needed {
            throw .malformedResponse(
                provider: provider, step: .discovery,
                reason: "/\(member) is missing and the policy does not give the endpoint")
        }
        return discovered
    }
}
