/// How long the agent waits after a failed renewal of a provider's sessions before it tries
/// again (docs/components/identity.md, "Background renewal and backoff"): exponential with
/// "equal" jitter, a delay between half and all of `base · 2^(failures − 1)`, at most `cap`. The
/// jitter spreads the devices a provider's outage failed together; its lower half keeps a wait
/// from ever being close to zero, so a dead provider is never asked on every call.
public struct RenewalBackoff: Sendable, Equatable {
    /// The first delay's ceiling, in seconds.
    public var base: Double
    /// The largest delay's ceiling, in seconds.
    public var cap: Double

    public init(base: Double = 10, cap: Double = 300) {
        self.base = base
        self.cap = cap
    }

    /// The delay after `failures` consecutive failures (at least 1), with `unit` a uniform random
    /// number in [0, 1): between half the ceiling (unit 0) and the ceiling (unit → 1).
    public func delay(afterFailures failures: Int, unit: Double) -> Double {
        let ceiling = min(cap, base * Double(1 << min(max(failures, 1) - 1, 30)))
        return ceiling * (0.5 + 0.5 * min(max(unit, 0), 1))
    }
}
