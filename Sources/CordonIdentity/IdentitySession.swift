/// The offline limits of the policy (`identity.offlineGraceMinutes`, `identity.offlineWipeDays`):
/// how long a session lives without reaching its provider, counted from the last time the provider
/// answered with tokens (a sign-in or a renewal: ``IdentitySession/confirmedAt``). The agent
/// renews before the grace runs out, so a device that reaches its provider is never blocked.
public struct OfflineLimits: Sendable, Equatable {
    /// After this many minutes without reaching the provider, apps are told `SessionExpired` and
    /// get no token (unless a renewal then reaches it); nil: no limit.
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
/// limits do, measured from the last successful contact with the provider: the last time it
/// issued or renewed the tokens. Half-way through the grace a renewal is due, so while the
/// provider answers the limit moves on.
public struct IdentitySession: Sendable, Equatable, Codable {
    public var provider: String
    public var domain: String
    public var tokens: TokenSet
    /// Unix time of the sign-in.
    public var signedInAt: Double
    /// Unix time of the last successful contact with the provider: when it last issued or
    /// renewed the tokens.
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
        /// The access token is good, but half of `offlineGraceMinutes` has passed since the last
        /// contact with the provider: it is served, and a renewal is tried beside it so that the
        /// grace starts again while the provider answers.
        case renewalDue
        /// The access token expires within the margin (or has) and a refresh token can renew it.
        case refreshDue
        /// The access token expired and there is no refresh token: the user is still locally
        /// authenticated (local data stays open) but a new token needs a sign-in.
        case locallyAuthenticated
        /// Past `offlineGraceMinutes` without reaching the provider: one renewal is tried; apps are
        /// told `SessionExpired` and get no token unless it reaches the provider.
        case blocked
        /// Past `offlineWipeDays`: the container is to be wiped.
        case wipe
    }

    /// The session's status at `now` under `limits`.
    public func status(at now: Double, limits: OfflineLimits) -> Status {
        let offline = now - confirmedAt
        if let days = limits.wipeDays, offline >= Double(days) * 86400 { return .wipe }
        if let minutes = limits.graceMinutes, offline >= Double(minutes) * 60 { return .blocked }
        if now < tokens.expiresAt - Self.refreshMargin {
            if let minutes = limits.graceMinutes, offline >= Double(minutes) * 30 { return .renewalDue }
            return .valid
        }
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
