/// Latency samples in nanoseconds, summarized.
struct LatencyStats: Codable {
    let count: Int
    let medianMicroseconds: Double
    let p99Microseconds: Double
    let meanMicroseconds: Double

    init(samples: [UInt64]) {
        let sorted = samples.sorted()
        count = sorted.count
        let micro = { (value: UInt64) in Double(value) / 1000 }
        medianMicroseconds = sorted.isEmpty ? 0 : micro(sorted[sorted.count / 2])
        p99Microseconds = sorted.isEmpty ? 0 : micro(sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
        meanMicroseconds = sorted.isEmpty ? 0 : sorted.reduce(0) { $0 + Double($1) } / Double(sorted.count) / 1000
    }
}
