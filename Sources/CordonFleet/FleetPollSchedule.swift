/// When fleetd polls next (docs/ARCHITECTURE.md, "Fleet"): the interval with ±50% jitter while the
/// repository answers, so a fleet that started together does not stay in step; after errors,
/// exponential backoff with full jitter (a uniform delay up to `base · 2^failures`, capped), so a
/// server that comes back is not stampeded by every machine at once.
public struct FleetPollSchedule: Sendable, Equatable {
    /// The poll interval, in seconds.
    public var interval: Double
    /// The first backoff's ceiling after an error, in seconds.
    public var backoffBase: Double = 2
    /// The largest backoff ceiling, in seconds (at least the interval).
    public var backoffCap: Double
    /// Errors since the last success.
    public private(set) var failures = 0

    public init(interval: Double, backoffCap: Double? = nil) {
        self.interval = interval
        self.backoffCap = max(interval, backoffCap ?? interval * 4)
    }

    /// The delay before the next poll after a success; `unit` is a uniform random number in [0, 1).
    public mutating func afterSuccess(unit: Double) -> Double {
        failures = 0
        return interval * (0.5 + unit)
    }

    /// The delay before the next try after a failure.
    public mutating func afterFailure(unit: Double) -> Double {
        failures += 1
        let ceiling = min(backoffCap, backoffBase * Double(1 << min(failures - 1, 30)))
        return ceiling * unit
    }
}
