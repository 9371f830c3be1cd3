/// Picks scrypt parameters that take about a target time on this machine.
///
/// Memory is capped (N ≤ 2^17 with r = 8, 128 MiB); past it, parallelism grows instead.
public struct KDFTuner: Sendable {
    /// The time one derivation should take, in seconds.
    public var targetSeconds: Double
    public var minRounds = 1 << 14
    public var maxRounds = 1 << 17

    public init(targetSeconds: Double = 0.25) {
        self.targetSeconds = targetSeconds
    }

    /// Tunes with `measure`, which runs one derivation with the given parameters and returns seconds.
    public func tune(salt: [UInt8], measure: (KDFParameters) throws -> Double) rethrows -> KDFParameters {
        var parameters = KDFParameters(rounds: minRounds, blockSize: 8, parallelism: 1, salt: salt)
        var elapsed = try measure(parameters)
        while elapsed < targetSeconds * 0.75 {
            if parameters.rounds < maxRounds {
                parameters.rounds *= 2
                elapsed *= 2
            } else if parameters.parallelism < 16 {
                let factor = max(2, Int((targetSeconds / max(elapsed, 0.001)).rounded(.down)))
                let next = min(16, parameters.parallelism * factor)
                elapsed = elapsed * Double(next) / Double(parameters.parallelism)
                parameters.parallelism = next
            } else {
                break
            }
            // Re-measure at the new size so the estimate does not drift.
            if elapsed >= targetSeconds * 0.75 { elapsed = try measure(parameters) }
        }
        return parameters
    }
}
