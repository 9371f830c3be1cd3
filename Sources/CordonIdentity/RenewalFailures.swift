/// A provider's renewals that failed in a row: how many, until when no renewal is tried, and the
/// error the last one ended with, which a call that needs a new token gets at once until then.
public struct RenewalFailures: Sendable, Equatable {
    /// Consecutive failures since the last success.
    public private(set) var count: Int
    /// Unix time before which no renewal is tried.
    public private(set) var retryAt: Double
    /// What the last failure ended with.
    public private(set) var lastError: IdentityError

    /// The first failure, `error` at `now`.
    public init(first error: IdentityError, at now: Double, backoff: RenewalBackoff, unit: Double) {
        count = 1
        lastError = error
        retryAt = now + backoff.delay(afterFailures: 1, unit: unit)
    }

    /// One more failure, `error` at `now`: the wait doubles (up to the cap).
    public mutating func failed(_ error: IdentityError, at now: Double, backoff: RenewalBackoff, unit: Double) {
        count += 1
        lastError = error
        retryAt = now + backoff.delay(afterFailures: count, unit: unit)
    }

    /// Whether a renewal waits at `now`.
    public func holds(at now: Double) -> Bool { now < retryAt }
}
