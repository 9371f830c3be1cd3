/// The device authorization grant (RFC 8628) as a state machine: it takes the provider's answers
/// and the time, and returns what to do (docs/ARCHITECTURE.md, "Identity"). No I/O, no clock of
/// its own.
public struct DeviceGrant: Sendable {
    /// Where the grant is.
    public enum Phase: Sendable, Equatable {
        case idle
        case awaitingDeviceCode
        /// Polling the token endpoint every `interval` seconds until `deadline`.
        case polling(interval: Int, deadline: Double)
        case finished
    }

    public let provider: ProviderConfiguration
    public private(set) var phase: Phase = .idle
    private var deviceCode = ""

    /// The interval when the provider gives none (RFC 8628 §3.2).
    public static let defaultInterval = 5
    /// What `slow_down` adds to the interval (RFC 8628 §3.5).
    public static let slowDownIncrement = 5

    public init(provider: ProviderConfiguration) {
        self.provider = provider
    }

    /// Starts the grant: the device authorization request.
    public mutating func start() -> [SignInAction] {
        guard phase == .idle, let endpoint = provider.deviceAuthorizationEndpoint else {
            return fail(
                .insecureEndpoint(
                    provider: provider.name, step: .deviceAuthorization, reason: "no device authorization endpoint"))
        }
        phase = .awaitingDeviceCode
        var form = [FormField("client_id", provider.clientID)]
        if !provider.scopes.isEmpty { form.append(FormField("scope", provider.scopes.joined(separator: " "))) }
        return [.send(ProviderRequest(url: endpoint, step: .deviceAuthorization, form: form))]
    }

    /// Feeds the answer (`status`, `body`) to the last request, received at `now`.
    public mutating func receive(status: Int, body: [UInt8], now: Double) -> [SignInAction] {
        do throws(IdentityError) {
            switch phase {
            case .awaitingDeviceCode: return try deviceCodeReceived(status: status, body: body, now: now)
            case .polling(let interval, let deadline):
                return try tokenReceived(status: status, body: body, now: now, interval: interval, deadline: deadline)
            case .idle, .finished: return []
            }
        } catch {
            return fail(error)
        }
    }

    /// The last request did not reach the provider: a poll is tried again at the same interval
    /// until the code expires (RFC 8628 §3.5 asks for a back-off; the interval is the back-off here).
    public mutating func unreachable(reason: String, now: Double) -> [SignInAction] {
        guard case .polling(let interval, let deadline) = phase else {
            return fail(.unreachable(provider: provider.name, step: .deviceAuthorization, reason: reason))
        }
        guard now + Double(interval) < deadline else { return fail(.expired(provider: provider.name, step: .token)) }
        return [.sendAfter(seconds: interval, tokenRequest)]
    }

    /// The user (or a lock) cancelled the sign-in.
    public mutating func cancel() -> [SignInAction] {
        guard phase != .finished else { return [] }
        let step: IdentityStep = phase == .awaitingDeviceCode || phase == .idle ? .deviceAuthorization : .token
        return fail(.cancelled(provider: provider.name, step: step))
    }

    private var tokenRequest: ProviderRequest {
        ProviderRequest(
            url: provider.tokenEndpoint, step: .token,
            form: [
                FormField("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                FormField("device_code", deviceCode), FormField("client_id", provider.clientID),
            ])
    }

    private mutating func deviceCodeReceived(status: Int, body: [UInt8], now: Double) throws(IdentityError)
        -> [SignInAction]
    {
        let step = IdentityStep.deviceAuthorization
        let object = try JSONObject.answer(status: status, body: body, provider: provider.name, step: step)
        if object["error"] != nil {
            let code = try object.string("error", provider: provider.name, step: step)
            throw .providerError(
                provider: provider.name, step: step, error: code, description: object["error_description"]?.stringValue,
                status: status)
        }
        if status >= 500 { throw .serverError(provider: provider.name, step: step, status: status) }
        guard (200..<300).contains(status) else {
            throw .malformedResponse(provider: provider.name, step: step, reason: "HTTP status \(status)")
        }
        deviceCode = try object.string("device_code", provider: provider.name, step: step)
        let userCode = try object.string("user_code", provider: provider.name, step: step)
        let uri = try object.string("verification_uri", provider: provider.name, step: step)
        let complete = try object.optionalString("verification_uri_complete", provider: provider.name, step: step)
        let expiresIn = try object.integer("expires_in", provider: provider.name, step: step)
        let interval =
            object["interval"] == nil
            ? Self.defaultInterval : try object.integer("interval", provider: provider.name, step: step)
        guard expiresIn > 0, (1...3600).contains(interval) else {
            throw .malformedResponse(
                provider: provider.name, step: step, reason: "\"expires_in\" or \"interval\" is out of range")
        }
        for link in [uri] + (complete.map { [$0] } ?? []) where EndpointRule.problem(link) != nil {
            throw .insecureEndpoint(
                provider: provider.name, step: step, reason: "the verification URI is not https or loopback")
        }
        let deadline = now + Double(expiresIn)
        phase = .polling(interval: interval, deadline: deadline)
        let prompt = DeviceCodePrompt(
            provider: provider.name, userCode: userCode, verificationURI: uri, verificationURIComplete: complete,
            expiresAt: deadline)
        return [.showUserCode(prompt), .sendAfter(seconds: interval, tokenRequest)]
    }

    private mutating func tokenReceived(status: Int, body: [UInt8], now: Double, interval: Int, deadline: Double)
        throws(IdentityError) -> [SignInAction]
    {
        let answer = try TokenResponseParser.parse(
            status: status, body: body, provider: provider.name, step: .token, now: now)
        switch answer {
        case .tokens(let tokens):
            phase = .finished
            return [.finish(tokens)]
        case .error("authorization_pending", _):
            guard now + Double(interval) < deadline else { throw .expired(provider: provider.name, step: .token) }
            return [.sendAfter(seconds: interval, tokenRequest)]
        case .error("slow_down", _):
            let slower = interval + Self.slowDownIncrement
            guard now + Double(slower) < deadline else { throw .expired(provider: provider.name, step: .token) }
            phase = .polling(interval: slower, deadline: deadline)
            return [.sendAfter(seconds: slower, tokenRequest)]
        case .error("access_denied", _): throw .denied(provider: provider.name, step: .token)
        case .error("expired_token", _): throw .expired(provider: provider.name, step: .token)
        case .error(let code, let description):
            throw .providerError(
                provider: provider.name, step: .token, error: code, description: description, status: status)
        }
    }

    private mutating func fail(_ error: IdentityError) -> [SignInAction] {
        phase = .finished
        deviceCode = ""
        return [.fail(error)]
    }
}
