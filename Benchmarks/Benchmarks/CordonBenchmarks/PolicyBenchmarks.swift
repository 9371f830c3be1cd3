import Benchmark
import CordonPolicy
import Foundation

/// `PolicyEvaluator.decide` per action on the corporate baseline merged over the built-in
/// default: the requests `cordon-bench policy` measures.
enum PolicyBenchmarks {
    /// The repository root, found from this file's path (`Benchmarks/Benchmarks/CordonBenchmarks/`).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let requests: [DecisionRequest] = {
        let notes = AppFacts(id: "com.example.notes", managed: true)
        let mail = AppFacts(id: "com.example.mail", managed: true)
        let outsider = AppFacts(id: "org.other.chat", managed: false)
        return [
            DecisionRequest(action: .pasteboardCopy, app: notes, length: 120),
            DecisionRequest(action: .pasteboardPaste, app: outsider, peer: notes, length: 120),
            DecisionRequest(action: .documentSend, app: notes, peer: mail, contentType: "application/pdf"),
            DecisionRequest(action: .documentReceive, app: mail, peer: outsider, contentType: "image/png"),
            DecisionRequest(
                action: .documentSave, app: notes, location: "/home/u/Documents/work/report.pdf",
                contentType: "application/pdf"),
        ]
    }()

    /// The evaluator of the corporate baseline over the default.
    static func makeEvaluator() throws -> PolicyEvaluator {
        let path = repositoryRoot.appendingPathComponent("policies/examples/corporate-baseline.json").path
        let source = PolicySource(path: path, origin: .admin)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let document = try PolicyParser.parse(bytes, source: source).get()
        return PolicyEvaluator(
            EffectivePolicy.merge([(document, source)], fallback: (BuiltinPolicy.document, BuiltinPolicy.source)))
    }

    static func register() {
        let evaluator: PolicyEvaluator
        do {
            evaluator = try makeEvaluator()
        } catch {
            print("policy benchmarks skipped: cannot load the corporate baseline: \(error)")
            return
        }
        for request in requests {
            Benchmark("policy.decide \(request.action.rawValue)") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(evaluator.decide(request))
                }
            }
        }
        Benchmark("policy.compile corporate-baseline", configuration: .init(scalingFactor: .one)) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try makeEvaluator())
            }
        }
    }
}
