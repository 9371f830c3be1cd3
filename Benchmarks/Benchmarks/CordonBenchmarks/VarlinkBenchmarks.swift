import Benchmark
import CordonProtocol
import Foundation

/// `VarlinkCodec` on a call (`Acknowledge`, as an app sends it) and on an event (one `Subscribe`
/// reply carrying a `CordonEvent`, as the agent fans it out), each encoded and decoded.
enum VarlinkBenchmarks {
    static let call = VarlinkCall(
        method: "io.cordon.Agent.Acknowledge", parameters: AcknowledgeParameters(seq: 42, status: .halted))
    static let event = VarlinkReply(
        parameters: SubscribeReply(
            event: CordonEvent(
                seq: 42, payload: .encryptionKeyUnavailable(ackDeadline: 1_795_000_002.25), reason: .idleTimeout,
                time: 1_795_000_000.25, state: .lockedNoKey)),
        continues: true)

    static func register() {
        let codec = VarlinkCodec()
        guard let callBytes = try? codec.encode(call), let eventBytes = try? codec.encode(event) else {
            print("varlink benchmarks skipped: the messages could not be encoded")
            return
        }
        Benchmark("varlink.encode call Acknowledge") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try codec.encode(call))
            }
        }
        Benchmark("varlink.decode call Acknowledge") { benchmark in
            for _ in benchmark.scaledIterations {
                let header = try codec.decodeHeader(callBytes)
                blackHole(header)
                blackHole(try codec.decodeParameters(AcknowledgeParameters.self, from: callBytes))
            }
        }
        Benchmark("varlink.encode event CordonEvent") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try codec.encode(event))
            }
        }
        Benchmark("varlink.decode event CordonEvent") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try codec.decodeParameters(SubscribeReply.self, from: eventBytes))
            }
        }
    }
}
