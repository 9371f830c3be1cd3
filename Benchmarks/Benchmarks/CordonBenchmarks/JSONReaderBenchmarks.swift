import Benchmark
import CordonPolicy
import CordonProtocol
import Foundation

/// The two JSON readers side by side, on the same bytes (docs/PERFORMANCE.md, "Two JSON readers"):
/// `JSONNodeParser` (CordonProtocol), which reads every varlink message the agent and the SDK
/// receive, and `PositionedJSONParser` (CordonPolicy), which reads policy files and keeps each
/// value's line, column and JSON pointer for the errors it reports. On a call as an app sends it
/// and on the built-in default policy.
enum JSONReaderBenchmarks {
    static let call = Array(
        #"{"method":"io.cordon.Storage.Get","parameters":{"namespace":"default","name":"draft-42"}}"#.utf8)

    static func register() {
        let policy = Array(BuiltinPolicy.json.utf8)
        for (name, bytes) in [("call Storage.Get", call), ("policy built-in default", policy)] {
            Benchmark("json.read \(name) JSONNodeParser") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(try JSONNodeParser.parse(bytes))
                }
            }
            Benchmark("json.read \(name) PositionedJSONParser") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(PositionedJSONParser.parse(bytes))
                }
            }
        }
    }
}
