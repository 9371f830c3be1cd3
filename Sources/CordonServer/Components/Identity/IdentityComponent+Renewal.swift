import CordonIdentity
import CordonProtocol
import NIOCore

/// Renewals without the user — a refresh, a CPA client credentials request — in the background
/// of a valid token, and the backoff a failed one sets (docs/components/identity.md, "Background
/// renewal and backoff"): a call never waits on a provider while its token is still valid, and a
/// provider that failed is not asked again on every call.
extension IdentityComponent {
    /// Starts the renewal of `session` beside its still valid token, which the caller was answered
    /// with (`getToken` starts it once the reply is written): unless one runs already (one flight per provider: it is joined, not
    /// doubled), the session cannot be renewed without the user (no refresh token: the sign-in
    /// waits for a call once the token has expired; nothing asks the user in the background), or
    /// a failed renewal's backoff holds.
    func renewInBackground(_ provider: ConfiguredProvider, domain: String, session: IdentitySession) {
        guard canRenew(provider, session), flights[provider.name] == nil, !backoffHolds(provider.name) else { return }
        _ = flight(provider, domain: domain, refreshing: session)
    }

    /// The renewal of `session`, whose access token has expired: the flight running for the
    /// provider (joined), the last failure's error at once while its backoff holds, or a new
    /// renewal. A session that cannot be renewed without the user signs in (never held back: an
    /// app waits for the user).
    func renewExpired(_ provider: ConfiguredProvider, domain: String, session: IdentitySession)
        -> EventLoopFuture<TokenSet>
    {
        guard canRenew(provider, session) else { return flight(provider, domain: domain, refreshing: session).future }
        if let running = flights[provider.name] { return running.future }
        if let failures = renewalFailures[provider.name], failures.holds(at: host.clock()) {
            return host.loop.makeFailedFuture(failures.lastError.cordonError)
        }
        return flight(provider, domain: domain, refreshing: session).future
    }

    /// A session past `offlineGraceMinutes`: one renewal (joined when one runs), unless a failed
    /// renewal's backoff holds, which answers `SessionExpired` at once; only tokens the provider
    /// issues now are given, never the old ones a flight falls back to when the provider is
    /// unreachable.
    func renewBlocked(_ provider: ConfiguredProvider, domain: String, session: IdentitySession)
        -> EventLoopFuture<TokenSet>
    {
        let expired = CordonError.sessionExpired(provider: provider.name)
        guard canRenew(provider, session) else { return host.loop.makeFailedFuture(expired) }
        if flights[provider.name] == nil, backoffHolds(provider.name) { return host.loop.makeFailedFuture(expired) }
        return flight(provider, domain: domain, refreshing: session).future.flatMapThrowing { tokens in
            guard tokens != session.tokens else { throw expired }
            return tokens
        }.flatMapErrorThrowing { error in
            // The provider was not reached (or refused): the session stays expired.
            if case CordonError.signInFailed = error { throw expired }
            throw error
        }
    }

    /// Whether a failed renewal of `provider` holds the next one back now.
    func backoffHolds(_ provider: String) -> Bool {
        renewalFailures[provider]?.holds(at: host.clock()) ?? false
    }

    /// A renewal of `provider` failed with `error` (the provider unreachable, a server error, an
    /// answer refused): no renewal is tried until the backoff, doubled from the last, has passed.
    func renewalFailed(_ provider: String, _ error: IdentityError) {
        let (now, unit, backoff) = (
            host.clock(), host.configuration.identityJitter(), host.configuration.identityRenewalBackoff
        )
        var failures: RenewalFailures
        if let previous = renewalFailures[provider] {
            failures = previous
            failures.failed(error, at: now, backoff: backoff, unit: unit)
        } else {
            failures = RenewalFailures(first: error, at: now, backoff: backoff, unit: unit)
        }
        renewalFailures[provider] = failures
        host.logger.info(
            "an identity renewal failed; the next is not tried before the backoff",
            metadata: [
                "provider": "\(provider)", "failures": "\(failures.count)",
                "seconds": "\(Int((failures.retryAt - now).rounded(.up)))", "reason": "\(error.cause)",
            ])
    }
}
