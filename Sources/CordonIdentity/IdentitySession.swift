/// The offline limits of the policy (`identity.offlineGraceMinutes`, `identity.offlineWipeDays`):
/// how long a session lives without reaching its provider.
public struct OfflineLimits: Sendable, Equatable {
    /// After this long without a successful issue or refresh, apps are told `SessionExpired` and
    /// get no token; nil: no limit.
    public var graceMinutes: Int?
    /// After this long, the container is wiped; nil: never.
    public var wipeDays: Int?

    public init(graceMinutes: Int?, wipeDays: Int?) {
        self.graceMinutes = graceMinutes
        self.wipeDays = wipeDays
    }
}

/// A signed-in session: the tokens for one provider and domain, when they were last confirmed by
/// the provider, and what that means now (docs/ARCHITECTURE.md, "Identity").
///
/// Vault's rule: once signed in, the user stays locally authenticated until an explicit sign-out;
/// an expired access token or no network does not end the session. Only the policy's offline
/// limits do, measured from the last time the provider issued or refreshed the tokens.
public struct IdentitySession: Sendable, Equatable, Codable {
    public var provider: String
    public var domain: String
    public var tokens: TokenSet
    /// Unix time of the sign-in.
    public var signedInAt: Double
    /// Unix time the provider last issued or refreshed the tokens.
    public var confirmedAt: Double

    /// How long before expiry a refresh is due.
    public static let refreshMargin: Double = 60

    public init(provider: String, domain: String, tokens: TokenSet, signedInAt: Double, confirmedAt: Double) {
        self.provider = provider
        self.domain = domain
        self.tokens = tokens
        self.signedInAt = signedInAt
        self.confirmedAt = confirmedAt
    }

    /// What the session allows at `now`.
    public enum Status: String, Sendable, Equatable {
        /// The access token is good for more than ``refreshMargin``.
        case valid
        /// The access token expires within the margin (or has) and a refresh token can renew it.
        case refreshDue
        /// The access token expired and there is no refresh token: the user is still locally
        /// authenticated (local data stays open) but a new token needs a sign-in.
        case locallyAuthenticated
        /// Past `offlineGraceMinutes`: apps are told `SessionExpired` and get no token until the
        /// provider is reached again.
        case blocked
        /// Past `offlineWipeDays`: the container is to be wiped.
        case wipe
    }

    /// The session's status at `now` under `limits`.
    public func status(at now: Double, limits: OfflineLimits) -> Status {
        let offline = now - confirmedAt
        if let days = limits.wipeDays, offline >= Double(days) * 86400 { return .wipe }
        if let minutes = limits.graceMinutes, offline >= Double(minutes) * 60 { return .blocked }
        if now < tokens.expiresAt - Self.refreshMargin { return .valid }
        return tokens.refreshToken == nil ? .locallyAuthenticated : .refreshDue
    }

    /// The session after a refresh answered `new` at `now` (rotation: ``TokenSet/refreshed(with:)``).
    public func refreshed(with new: TokenSet, at now: Double) -> IdentitySession {
        var session = self
        session.tokens = tokens.refreshed(with: new)
        session.confirmedAt = now
        return session
    }
}
