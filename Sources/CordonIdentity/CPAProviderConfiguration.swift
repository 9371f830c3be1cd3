/// A CPA 1.0 authorization provider (ETSI TS 103 407, EBU Cross-Platform Authentication) as the
/// agent uses it: its base URL and the domains it issues tokens for (the policy's
/// `identity.cpaProviders`, docs/ARCHITECTURE.md "Identity").
///
/// Every request is a JSON POST to `<baseURL>/register`, `/associate` or `/token`; the single
/// round trips are here (registration, a client token, which is also how a CPA token is renewed),
/// the user sign-in with its polling is ``CPASignIn``.
public struct CPAProviderConfiguration: Sendable, Equatable {
    public var name: String
    /// The authorization provider's base URL (`https://ap.example` or with a path prefix).
    public var baseURL: String
    /// The service provider domains it issues tokens for (`domain` in every request).
    public var domains: [String]

    /// `grant_type` of a client token request (ETSI TS 103 407 §8.4.1.1).
    public static let clientCredentialsGrant = "http://tech.ebu.ch/cpa/1.0/client_credentials"
    /// `grant_type` of a user token request with the device code (ETSI TS 103 407 §8.4.1.2).
    public static let deviceCodeGrant = "http://tech.ebu.ch/cpa/1.0/device_code"

    public init(name: String, baseURL: String, domains: [String]) {
        self.name = name
        self.baseURL = baseURL
        self.domains = domains
    }

    /// `<baseURL>/register`.
    public var registrationEndpoint: String { endpoint("register") }
    /// `<baseURL>/associate`.
    public var associationEndpoint: String { endpoint("associate") }
    /// `<baseURL>/token`.
    public var tokenEndpoint: String { endpoint("token") }

    private func endpoint(_ path: String) -> String {
        (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL) + "/" + path
    }

    /// Checks that the base URL is acceptable (``EndpointRule``, and no query) and that there is a domain.
    public func validate() throws(IdentityError) {
        if let problem = EndpointRule.problem(baseURL) {
            throw .insecureEndpoint(provider: name, step: .registration, reason: problem)
        }
        guard !baseURL.contains("?") else {
            throw .insecureEndpoint(provider: name, step: .registration, reason: "\(baseURL) holds a query")
        }
        guard !domains.isEmpty, domains.allSatisfy({ !$0.isEmpty }) else {
            throw .malformedResponse(provider: name, step: .registration, reason: "the provider has no domain")
        }
    }

    // MARK: Requests

    /// The client registration (ETSI TS 103 407 §8.2): answered 201 with a client id and secret.
    public func registrationRequest(_ client: CPAClientDescription) -> ProviderRequest {
        ProviderRequest(
            url: registrationEndpoint, step: .registration,
            form: [
                FormField("client_name", client.clientName), FormField("software_id", client.softwareID),
                FormField("software_version", client.softwareVersion),
            ], encoding: .json)
    }

    /// The association of the client with a user for `domain` (ETSI TS 103 407 §8.3): a device
    /// code, and a user code with its verification URI.
    public func associationRequest(_ credentials: CPAClientCredentials, domain: String) -> ProviderRequest {
        ProviderRequest(
            url: associationEndpoint, step: .association,
            form: [
                FormField("client_id", credentials.clientID), FormField("client_secret", credentials.clientSecret),
                FormField("domain", domain),
            ], encoding: .json)
    }

    /// A token for `domain` with the client credentials grant (ETSI TS 103 407 §8.4.1.1, §8.4.1.3):
    /// a client (anonymous) token, or a user token when the client is already associated with a
    /// user. CPA has no refresh token; this request is how a CPA token is renewed.
    public func clientTokenRequest(_ credentials: CPAClientCredentials, domain: String) -> ProviderRequest {
        ProviderRequest(
            url: tokenEndpoint, step: .token,
            form: [
                FormField("grant_type", Self.clientCredentialsGrant), FormField("client_id", credentials.clientID),
                FormField("client_secret", credentials.clientSecret), FormField("domain", domain),
            ], encoding: .json)
    }

    /// A user token for `domain` with the association's device code (ETSI TS 103 407 §8.4.1.2).
    public func userTokenRequest(_ credentials: CPAClientCredentials, deviceCode: String, domain: String)
        -> ProviderRequest
    {
        ProviderRequest(
            url: tokenEndpoint, step: .token,
            form: [
                FormField("grant_type", Self.deviceCodeGrant), FormField("device_code", deviceCode),
                FormField("client_id", credentials.clientID), FormField("client_secret", credentials.clientSecret),
                FormField("domain", domain),
            ], encoding: .json)
    }

    // MARK: Answers

    /// The credentials a registration answered (201 `{"client_id", "client_secret"}`).
    public func registered(status: Int, body: [UInt8]) throws(IdentityError) -> CPAClientCredentials {
        let step = IdentityStep.registration
        let object = try JSONObject.answer(status: status, body: body, provider: name, step: step)
        if let (code, description) = try CPAAnswer.errorCode(object, provider: name, step: step) {
            throw CPAAnswer.error(
                code, description: description, provider: name, step: step, secrets: [], status: status)
        }
        try CPAAnswer.requireSuccess(status, provider: name, step: step)
        return CPAClientCredentials(
            clientID: try object.string("client_id", provider: name, step: step),
            clientSecret: try object.string("client_secret", provider: name, step: step))
    }

    /// The token a client token request answered for `domain`, received at `now`.
    ///
    /// `invalid_client` (the provider no longer knows the client: register again) is
    /// ``IdentityError/providerError`` with that code; an error description that quotes the
    /// client secret is withheld.
    public func clientToken(
        status: Int, body: [UInt8], credentials: CPAClientCredentials, domain: String, now: Double
    ) throws(IdentityError) -> TokenSet {
        switch try CPAAnswer.token(
            status: status, body: body, provider: name, domain: domain, now: now,
            secrets: [credentials.clientSecret])
        {
        case .token(let tokens): return tokens
        case .pending, .slowDown:
            throw .malformedResponse(
                provider: name, step: .token, reason: "a client token request was answered as pending")
        }
    }
}
