/// A CPA 1.0 token for one domain (ETSI TS 103 407) as a state machine: it takes the provider's
/// answers and the time, and returns ``SignInAction``s; the driver does the HTTP (each request's
/// ``ProviderRequest/body`` is JSON, see ``ProviderRequest/contentType``) and the waiting
/// (docs/ARCHITECTURE.md, "Identity").
///
/// Without stored credentials it registers first (`/register`, 201); the driver stores
/// ``credentials`` whenever ``registeredNewClient`` is true, whatever the outcome, since they are
/// the device's identity at the provider. A client token is one client credentials request; a user
/// token is an association (`/associate`: device code, user code, verification URI) then polling
/// `/token` (202 `authorization_pending`, `slow_down`, `cancelled`, `expired`) until the user pairs
/// the device or the code expires. Stored credentials the provider no longer knows
/// (`invalid_client`) are replaced by a new registration, once.
public struct CPASignIn: Sendable {
    /// Which token the sign-in gets.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// A client (anonymous) token: the client credentials grant.
        case client
        /// A user token: association with a user through the user code, then the device code grant.
        case user
    }

    /// Where the sign-in is.
    public enum Phase: Sendable, Equatable {
        case idle
        case registering
        case requestingClientToken
        case associating
        /// Polling `/token` every `interval` seconds until `deadline`.
        case polling(interval: Int, deadline: Double)
        case finished
    }

    public let provider: CPAProviderConfiguration
    public let domain: String
    public let mode: Mode
    public let client: CPAClientDescription
    public private(set) var phase: Phase = .idle
    /// The client credentials in use: those given, or those `/register` answered.
    public private(set) var credentials: CPAClientCredentials?
    /// Whether ``credentials`` came from a registration in this sign-in (to be stored).
    public private(set) var registeredNewClient = false
    private var deviceCode = ""

    /// The interval when the association gives none (as RFC 8628 §3.2).
    public static let defaultInterval = 5
    /// What `slow_down` adds to the interval (as RFC 8628 §3.5).
    public static let slowDownIncrement = 5

    /// A sign-in for `domain` at `provider`, with the device's stored `credentials` (nil: register
    /// as `client`).
    public init(
        provider: CPAProviderConfiguration, domain: String, mode: Mode, credentials: CPAClientCredentials?,
        client: CPAClientDescription
    ) {
        self.provider = provider
        self.domain = domain
        self.mode = mode
        self.credentials = credentials
        self.client = client
    }

    /// Starts the sign-in: a registration, or the first request with the stored credentials.
    public mutating func start() -> [SignInAction] {
        guard phase == .idle else { return [] }
        guard let credentials else { return register() }
        return firstRequest(credentials)
    }

    /// Feeds the answer (`status`, `body`) to the last request, received at `now`.
    public mutating func receive(status: Int, body: [UInt8], now: Double) -> [SignInAction] {
        do throws(IdentityError) {
            switch phase {
            case .registering:
                let registered = try provider.registered(status: status, body: body)
                credentials = registered
                registeredNewClient = true
                return firstRequest(registered)
            case .requestingClientToken: return try clientTokenReceived(status: status, body: body, now: now)
            case .associating: return try associationReceived(status: status, body: body, now: now)
            case .polling(let interval, let deadline):
                return try tokenReceived(status: status, body: body, now: now, interval: interval, deadline: deadline)
            case .idle, .finished: return []
            }
        } catch {
            return fail(error)
        }
    }

    /// The last request did not reach the provider: a poll is tried again at the same interval
    /// until the device code expires; any other request fails the sign-in.
    public mutating func unreachable(reason: String, now: Double) -> [SignInAction] {
        guard case .polling(let interval, let deadline) = phase else {
            return fail(.unreachable(provider: provider.name, step: step, reason: reason))
        }
        guard now + Double(interval) < deadline else { return fail(.expired(provider: provider.name, step: .token)) }
        return [.sendAfter(seconds: interval, userTokenRequest)]
    }

    /// The user (or a lock) cancelled the sign-in.
    public mutating func cancel() -> [SignInAction] {
        guard phase != .finished else { return [] }
        return fail(.cancelled(provider: provider.name, step: step))
    }

    /// The step the sign-in is at (what a cancellation names).
    public var step: IdentityStep {
        switch phase {
        case .idle, .registering: .registration
        case .associating: .association
        case .requestingClientToken, .polling, .finished: .token
        }
    }

    private var userTokenRequest: ProviderRequest {
        provider.userTokenRequest(
            credentials ?? CPAClientCredentials(clientID: "", clientSecret: ""), deviceCode: deviceCode,
            domain: domain)
    }

    private var secrets: [String] { [credentials?.clientSecret ?? "", deviceCode] }

    private mutating func register() -> [SignInAction] {
        phase = .registering
        return [.send(provider.registrationRequest(client))]
    }

    private mutating func firstRequest(_ credentials: CPAClientCredentials) -> [SignInAction] {
        switch mode {
        case .client:
            phase = .requestingClientToken
            return [.send(provider.clientTokenRequest(credentials, domain: domain))]
        case .user:
            phase = .associating
            return [.send(provider.associationRequest(credentials, domain: domain))]
        }
    }

    /// Stored credentials the provider does not know: register again, once.
    private mutating func reregisterIfUnknown(_ error: IdentityError) throws(IdentityError) -> [SignInAction] {
        guard case .providerError(_, _, "invalid_client", _, _) = error, !registeredNewClient else { throw error }
        credentials = nil
        return register()
    }

    private mutating func clientTokenReceived(status: Int, body: [UInt8], now: Double) throws(IdentityError)
        -> [SignInAction]
    {
        let answer: CPAAnswer
        do {
            answer = try CPAAnswer.token(
                status: status, body: body, provider: provider.name, domain: domain, now: now, secrets: secrets)
        } catch {
            return try reregisterIfUnknown(error)
        }
        guard case .token(let tokens) = answer else {
            throw .malformedResponse(
                provider: provider.name, step: .token, reason: "a client token request was answered as pending")
        }
        phase = .finished
        return [.finish(tokens)]
    }

    private mutating func associationReceived(status: Int, body: [UInt8], now: Double) throws(IdentityError)
        -> [SignInAction]
    {
        let (name, step) = (provider.name, IdentityStep.association)
        let object = try JSONObject.answer(status: status, body: body, provider: name, step: step)
        if let (code, description) = try CPAAnswer.errorCode(object, provider: name, step: step) {
            return try reregisterIfUnknown(
                CPAAnswer.error(
                    code, description: description, provider: name, step: step, secrets: secrets, status: status))
        }
        try CPAAnswer.requireSuccess(status, provider: name, step: step)
        let code = try object.string("device_code", provider: name, step: step)
        let userCode = try object.optionalString("user_code", provider: name, step: step)
        let uri = try object.optionalString("verification_uri", provider: name, step: step)
        let expiresIn = try object.integer("expires_in", provider: name, step: step)
        let interval =
            object["interval"] == nil || object["interval"] == .null
            ? Self.defaultInterval : try object.integer("interval", provider: name, step: step)
        guard expiresIn > 0, (1...3600).contains(interval) else {
            throw .malformedResponse(
                provider: name, step: step, reason: "\"expires_in\" or \"interval\" is out of range")
        }
        if userCode != nil, uri == nil {
            throw .malformedResponse(provider: name, step: step, reason: "a user code without \"verification_uri\"")
        }
        if let uri, EndpointRule.problem(uri) != nil {
            throw .insecureEndpoint(
                provider: name, step: step, reason: "the verification URI is not https or loopback")
        }
        deviceCode = code
        let deadline = now + Double(expiresIn)
        phase = .polling(interval: interval, deadline: deadline)
        guard let uri else {
            // Already associated and provisioned: the token is ready without the user.
            return [.send(userTokenRequest)]
        }
        // Without a user code the device is already paired and the user only confirms at the URI.
        let prompt = DeviceCodePrompt(
            provider: name, userCode: userCode ?? "", verificationURI: uri, verificationURIComplete: nil,
            expiresAt: deadline)
        return [.showUserCode(prompt), .sendAfter(seconds: interval, userTokenRequest)]
    }

    private mutating func tokenReceived(status: Int, body: [UInt8], now: Double, interval: Int, deadline: Double)
        throws(IdentityError) -> [SignInAction]
    {
        switch try CPAAnswer.token(
            status: status, body: body, provider: provider.name, domain: domain, now: now, secrets: secrets)
        {
        case .token(let tokens):
            phase = .finished
            deviceCode = ""
            return [.finish(tokens)]
        case .pending:
            guard now + Double(interval) < deadline else { throw .expired(provider: provider.name, step: .token) }
            return [.sendAfter(seconds: interval, userTokenRequest)]
        case .slowDown:
            let slower = interval + Self.slowDownIncrement
            guard now + Double(slower) < deadline else { throw .expired(provider: provider.name, step: .token) }
            phase = .polling(interval: slower, deadline: deadline)
            return [.sendAfter(seconds: slower, userTokenRequest)]
        }
    }

    private mutating func fail(_ error: IdentityError) -> [SignInAction] {
        phase = .finished
        deviceCode = ""
        return [.fail(error)]
    }
}
