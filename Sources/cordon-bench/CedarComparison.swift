import CordonPolicy
import Dispatch
import Foundation

/// Decides the same request mix with CordonPolicy in process and with Cedar (`cedarpy`, through
/// `scripts/cedar_bench.py`), checks that both engines decide every request the same, and
/// compares nanoseconds per decision.
///
/// Each `scripts/cedar/NAME.cedar` translates the pasteboard and document rules of the Cordon
/// policy `policies/examples/NAME.json` (or `scripts/cedar/NAME.json`) merged over the built-in
/// default. Each engine decides the whole mix `repetitions` times; a sample is one pass's time
/// divided by the number of requests (for Cedar one `is_authorized_batch` call).
struct CedarComparison {
    /// `scripts/cedar_bench.py`; the Cedar policies are in `cedar/` beside it.
    let script: String
    /// The Cordon example policies.
    let examples: String
    let repetitions: Int

    /// One policy pair and its requests.
    private struct Case {
        let name: String
        let cordonPath: String
        let cedarPath: String
        let evaluator: PolicyEvaluator
        let requests: [DecisionRequest]
    }

    func run() throws -> CedarComparisonReport {
        guard repetitions > 0 else { return .skipped("--cedar-repetitions is 0", repetitions: 0) }
        guard FileManager.default.fileExists(atPath: script) else {
            throw CedarComparisonError.setup(
                "\(script) not found: run cordon-bench from the repository root or pass --cedar-script")
        }
        let cases = try loadCases()
        let warmup = max(1, repetitions / 10)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-cedar-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let mix = CedarWire.Mix(
            repetitions: repetitions, warmup: warmup,
            policies: cases.map { item in
                CedarWire.Policy(
                    name: item.name, cedar: item.cedarPath, requests: item.requests.map(CedarWire.Request.init))
            })
        let mixURL = directory.appendingPathComponent("mix.json")
        try JSONEncoder().encode(mix).write(to: mixURL)
        let cedar: CedarWire.Result
        switch try runScript(mix: mixURL, in: directory) {
        case .skipped(let reason): return .skipped(reason, repetitions: repetitions)
        case .result(let result): cedar = result
        }

        var rows: [CedarPolicyComparison] = []
        for item in cases {
            guard let cedarRow = cedar.policies.first(where: { $0.name == item.name }) else {
                throw CedarComparisonError.setup("cedar_bench.py returned no result for \(item.name)")
            }
            try checkAgreement(item, cedarRow.decisions)
            let cordon = Self.measure(item.evaluator, item.requests, repetitions: repetitions, warmup: warmup)
            rows.append(
                CedarPolicyComparison(
                    policy: item.cordonPath, cedarPolicy: item.cedarPath, requests: item.requests.count,
                    allowed: cordon.allowed, denied: item.requests.count - cordon.allowed,
                    cordonMedianNanoseconds: cordon.median, cordonP99Nanoseconds: cordon.p99,
                    cedarMedianNanoseconds: cedarRow.medianNanoseconds, cedarP99Nanoseconds: cedarRow.p99Nanoseconds,
                    cedarEngineMedianNanoseconds: cedarRow.engineMedianNanoseconds,
                    cedarEngineP99Nanoseconds: cedarRow.engineP99Nanoseconds,
                    medianRatio: cedarRow.medianNanoseconds / cordon.median,
                    p99Ratio: cedarRow.p99Nanoseconds / cordon.p99,
                    engineMedianRatio: cedarRow.engineMedianNanoseconds / cordon.median))
        }
        return .measured(version: cedar.version, repetitions: repetitions, policies: rows)
    }

    /// Every `cedar/*.cedar` with its Cordon policy, evaluator and request mix.
    private func loadCases() throws -> [Case] {
        let cedarDirectory = (script as NSString).deletingLastPathComponent + "/cedar"
        let names = try FileManager.default.contentsOfDirectory(atPath: cedarDirectory)
            .filter { $0.hasSuffix(".cedar") }.map { String($0.dropLast(".cedar".count)) }.sorted()
        guard !names.isEmpty else { throw CedarComparisonError.setup("no .cedar policies in \(cedarDirectory)") }
        return try names.map { name in
            let example = examples + "/" + name + ".json"
            let cordonPath =
                FileManager.default.fileExists(atPath: example) ? example : cedarDirectory + "/" + name + ".json"
            let source = PolicySource(path: cordonPath, origin: .admin)
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: cordonPath)))
            } catch {
                throw CedarComparisonError.setup("\(name).cedar has no Cordon policy (\(example) or \(cordonPath))")
            }
            let document = try PolicyParser.parse(bytes, source: source).get()
            let evaluator = PolicyEvaluator(
                EffectivePolicy.merge([(document, source)], fallback: (BuiltinPolicy.document, BuiltinPolicy.source)))
            let managed = document[PolicyKeys.Apps.managed]?.map(\.id) ?? []
            return Case(
                name: name, cordonPath: cordonPath, cedarPath: cedarDirectory + "/" + name + ".cedar",
                evaluator: evaluator, requests: CedarRequestMix.requests(managedIds: managed))
        }
    }

    private enum ScriptOutcome {
        case result(CedarWire.Result)
        case skipped(String)
    }

    /// Runs `python3 script mix`; exit status 3 means cedarpy is missing, 127 that python3 is.
    private func runScript(mix: URL, in directory: URL) throws -> ScriptOutcome {
        let output = directory.appendingPathComponent("cedar.out")
        let errors = directory.appendingPathComponent("cedar.err")
        for file in [output, errors] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw CedarComparisonError.setup("cannot create \(file.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, mix.path]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        do {
            try process.run()
        } catch {
            return .skipped("cannot run python3 (\(error)); install Python 3, then: python3 -m pip install cedarpy")
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        switch process.terminationStatus {
        case 0: break
        case 3:
            return .skipped(
                "cedarpy is not installed for python3; install it with: python3 -m pip install cedarpy")
        case 127:
            return .skipped("python3 not found; install Python 3, then: python3 -m pip install cedarpy")
        default:
            throw CedarComparisonError.setup(
                "cedar_bench.py exited with status \(process.terminationStatus): \(stderr)")
        }
        do {
            return .result(try JSONDecoder().decode(CedarWire.Result.self, from: Data(contentsOf: output)))
        } catch {
            throw CedarComparisonError.setup("cannot read cedar_bench.py's output: \(error)")
        }
    }

    /// Throws, listing every request the engines decide differently.
    private func checkAgreement(_ item: Case, _ cedarDecisions: [Bool]) throws {
        guard cedarDecisions.count == item.requests.count else {
            throw CedarComparisonError.disagreement(
                "\(item.name): Cedar returned \(cedarDecisions.count) decisions for \(item.requests.count) requests")
        }
        var lines: [String] = []
        for (request, cedarAllowed) in zip(item.requests, cedarDecisions) {
            let decision = item.evaluator.decide(request)
            guard decision.allowed != cedarAllowed else { continue }
            lines.append(
                "  \(item.name): \(Self.describe(request)): Cordon \(decision.allowed ? "allows" : "denies") "
                    + "(\(decision.reason)), Cedar \(cedarAllowed ? "allows" : "denies")")
        }
        guard lines.isEmpty else {
            throw CedarComparisonError.disagreement(
                "\(lines.count) of \(item.requests.count) requests decided differently under \(item.cordonPath) "
                    + "and \(item.cedarPath):\n" + lines.joined(separator: "\n"))
        }
    }

    static func describe(_ request: DecisionRequest) -> String {
        var parts = [request.action.rawValue, "app=\(request.app.id)\(request.app.managed ? "" : " (unmanaged)")"]
        if let peer = request.peer { parts.append("peer=\(peer.id)\(peer.managed ? "" : " (unmanaged)")") }
        if let contentType = request.contentType { parts.append("contentType=\(contentType)") }
        if let location = request.location { parts.append("location=\(location)") }
        return parts.joined(separator: " ")
    }

    /// Median and p99 nanoseconds per decision, each sample one pass over `requests`.
    static func measure(
        _ evaluator: PolicyEvaluator, _ requests: [DecisionRequest], repetitions: Int, warmup: Int
    ) -> (median: Double, p99: Double, allowed: Int) {
        var allowed = 0
        for _ in 0..<warmup {
            for request in requests where evaluator.decide(request).allowed { allowed += 1 }
        }
        allowed = 0
        var samples: [Double] = []
        samples.reserveCapacity(repetitions)
        for _ in 0..<repetitions {
            let start = DispatchTime.now().uptimeNanoseconds
            for request in requests where evaluator.decide(request).allowed { allowed += 1 }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(requests.count))
        }
        samples.sort()
        return (
            samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)],
            allowed / repetitions
        )
    }
}

/// Why the Cedar comparison could not give a result.
enum CedarComparisonError: Error, CustomStringConvertible {
    /// The engines decided some requests differently: the timings would compare different work.
    case disagreement(String)
    /// The comparison could not be set up or the script failed.
    case setup(String)

    var description: String {
        switch self {
        case .disagreement(let details): return "Cordon and Cedar disagree: \(details)"
        case .setup(let reason): return "Cedar comparison: \(reason)"
        }
    }
}
