/// What the user is shown for a device authorization grant (RFC 8628 §3.3).
public struct DeviceCodePrompt: Sendable, Equatable {
    public var provider: String
    public var userCode: String
    public var verificationURI: String
    /// The URI with the user code in it, when the provider gives one (RFC 8628 §3.3.1).
    public var verificationURIComplete: String?
    /// Unix time the device code expires.
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

/// What a sign-in state machine asks its driver (the agent) to do next.
public enum SignInAction: Sendable, Equatable {
    /// Send `request` now and feed the answer back.
    case send(ProviderRequest)
    /// Send `request` after `seconds` (device grant polling) and feed the answer back.
    case sendAfter(seconds: Int, ProviderRequest)
    /// Show the user code and verification URI (terminal, desktop notification).
    case showUserCode(DeviceCodePrompt)
    /// Open `url` in the user's browser (loopback flow); the redirect is fed back.
    case openBrowser(url: String)
    /// Signed in: store these tokens.
    case finish(TokenSet)
    /// The sign-in failed; nothing is stored.
    case fail(IdentityError)
}
