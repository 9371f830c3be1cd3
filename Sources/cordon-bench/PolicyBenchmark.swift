import ArgumentParser
import CordonPolicy
import Dispatch
import Foundation

/// `cordon-bench policy`: in-process evaluation per action on the example policies, and
/// `Check` over the socket against a raw Unix-socket round trip, in the same run.
struct PolicyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Policy evaluation in process (per action) and Check over the socket vs a raw round trip.",
        discussion: """
            The example policies are merged as admin files over the built-in default. Each in-process
            sample is the mean of a batch of decisions (the clock is too coarse for one); median and p99
            are over the batches. The Cedar comparison decides every request of a mix per scripts/cedar/*.cedar
            with both engines (python3 and cedarpy; skipped when missing), fails if they disagree, and
            compares ns per decision, in --cedar-runs runs. Target: in-process evaluation faster than
            Cedar on every policy (--summary appends each policy's runs; Check over the socket is
            `cordon-bench rtt`'s target).
            """)

    @Option(help: "Directory of example policies (admin files).")
    var policies = "policies/examples"
    @Option(help: "Batches per action.")
    var batches = 2000
    @Option(help: "Decisions per batch.")
    var batchSize = 200
    @Option(help: "Round trips for Check over the socket.")
    var iterations = 20000
    @Option(help: "The Cedar peer (its policies are in cedar/ beside it).")
    var cedarScript = "scripts/cedar_bench.py"
    @Option(help: "Repetitions of each request mix per engine in the Cedar comparison (0 skips it).")
    var cedarRepetitions = 200
    @Option(help: "Runs of the Cedar comparison (its figures are the runs' medians, each run's ratio listed).")
    var cedarRuns = 5
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @OptionGroup var summary: SummaryOption

    /// The requests measured, one per action, against the corporate baseline's app ids.
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

    func run() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: policies).filter { $0.hasSuffix(".json") }
            .sorted().map { policies + "/" + $0 }
        let baseline = files.filter { $0.hasSuffix("corporate-baseline.json") }
        var documents: [(PolicyDocument, PolicySource)] = []
        for file in baseline {
            let source = PolicySource(path: file, origin: .admin)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            documents.append((try PolicyParser.parse(bytes, source: source).get(), source))
        }
        let evaluator = PolicyEvaluator(
            EffectivePolicy.merge(documents, fallback: (BuiltinPolicy.document, BuiltinPolicy.source)))
        var inProcess: [PolicyActionStats] = []
        for request in Self.requests {
            inProcess.append(measure(evaluator, request))
        }
        let comparison = CedarComparison(script: cedarScript, examples: policies, repetitions: cedarRepetitions)
        var cedarReports: [CedarComparisonReport] = [try comparison.run()]
        while cedarReports.count < cedarRuns, cedarReports[0].status == "measured" {
            cedarReports.append(try comparison.run())
        }
        let cedar = CedarComparisonReport.merged(cedarReports)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-policy-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try DaemonLauncher.start(in: directory, adminPolicies: baseline)
        defer {
            daemon.process.terminate()
            daemon.process.waitUntilExit()
        }
        let roundTrips = RoundTripComparison(directory: directory, iterations: iterations, warmup: iterations / 10)
        let check = try roundTrips.run(
            name: "Check", request: RTTFixture.checkRequest,
            agent: RoundTripComparison.connect(name: "Check", socketPath: daemon.socket, calls: []),
            registered: false)

        let report = PolicyReport(policies: baseline, inProcess: inProcess, cedar: cedar, check: check)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.printTable()
        }
        try summary.append(cedar.summaryRecords)
    }

    private func measure(_ evaluator: PolicyEvaluator, _ request: DecisionRequest) -> PolicyActionStats {
        var allowed = 0
        var samples: [Double] = []
        samples.reserveCapacity(batches)
        for _ in 0..<batches {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<batchSize where evaluator.decide(request).allowed { allowed += 1 }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(batchSize))
        }
        samples.sort()
        return PolicyActionStats(
            action: request.action.rawValue, allowed: allowed > 0, medianNanoseconds: samples[samples.count / 2],
            p99Nanoseconds: samples[min(samples.count - 1, samples.count * 99 / 100)])
    }
}

/// One action's in-process figures.
struct PolicyActionStats: Codable {
    let action: String
    let allowed: Bool
    let medianNanoseconds: Double
    let p99Nanoseconds: Double
}

/// The result of `cordon-bench policy`.
struct PolicyReport: Codable {
    let policies: [String]
    let inProcess: [PolicyActionStats]
    let cedar: CedarComparisonReport
    let check: RTTReport

    func printTable() {
        print("policy: in-process evaluation, \(policies.map { ($0 as NSString).lastPathComponent }) over the default")
        print("action               decision   median ns     p99 ns")
        for stats in inProcess {
            let action = stats.action.padding(toLength: 21, withPad: " ", startingAt: 0)
            let decision = (stats.allowed ? "allow" : "deny").padding(toLength: 8, withPad: " ", startingAt: 0)
            print(action + decision + String(format: "%10.0f %10.0f", stats.medianNanoseconds, stats.p99Nanoseconds))
        }
        print("")
        cedar.printTable()
        check.printTable()
    }
}
