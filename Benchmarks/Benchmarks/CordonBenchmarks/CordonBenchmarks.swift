import Benchmark
import CordonPolicy
import CordonProtocol
import Foundation

/// The suite: time and allocations per policy decision, per-app key derivation, and varlink
/// encode/decode of a call and of an event. Each iteration is one operation (`scaledIterations`
/// repeats it `scalingFactor` times per sample so the clock resolves it).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )
    PolicyBenchmarks.register()
    KeyBenchmarks.register()
    VarlinkBenchmarks.register()
    JSONReaderBenchmarks.register()
}
