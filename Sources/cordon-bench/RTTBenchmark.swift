import ArgumentParser
import CordonBenchSummary
import CordonSystem
import Dispatch
import Foundation

/// `cordon-bench rtt`: calls over the agent's socket against a separate-process echo, per placement.
struct RTTBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtt",
        abstract: "Round trips over the agent's socket vs a separate-process echo of the same sizes.",
        discussion: """
            Both sides use the same blocking client, call by call in turn; the echo is a forked C \
            process that answers with a message as long as the agent's reply, so the difference is \
            the agent's own cost per call. Each placement (one-cpu: everything on CPU 0; split: the \
            client on CPU 0, agent and echo on CPU 1; unpinned) is measured --runs times for each \
            method: GetStatus, Check (pasteboard.paste), Storage.Get (a 1 KiB record the app stored), \
            Tokens.Code (a TOTP the app may read) and Identity.GetToken (a token the agent holds for \
            a signed-in session at the local identity provider, Tests/CordonIdentityTests/peers; \
            skipped with the reason when python3, authlib or Flask is missing). Each method's \
            connection registers its own app first; then the benchmark makes itself non-dumpable, as \
            the agent demands of an app it hands data to, so it runs as an ordinary user. Without --socket a cordond next \
            to this binary is started on a temporary directory, initialized and unlocked; with \
            --socket only GetStatus and Check are measured. Targets: the median ratio agent / echo \
            <= 1.5x one-cpu and <= 2x unpinned, for every method (--summary appends them).
            """)

    @Option(help: "Round trips measured per side in each run.")
    var iterations = 10000
    @Option(help: "Runs per placement (the report gives their spread).")
    var runs = 5
    @Option(help: "A placement to measure (one-cpu, split, unpinned); repeat for several. Default: all.")
    var placement: [RoundTripPlacement] = []
    @Option(
        help: """
            A method to measure (GetStatus, Check, Storage.Get, Tokens.Code, Identity.GetToken; with or \
            without io.cordon.); repeat, or separate with commas. Default: all.
            """)
    var method: [String] = []
    @Option(help: "Round trips before measuring.")
    var warmup = 2000
    @Option(help: "Use an already running agent at this socket.")
    var socket: String?
    @Option(help: "The identity test peers (identity_provider.py, authlib and Flask).")
    var identityPeers = "Tests/CordonIdentityTests/peers"
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @OptionGroup var summary: SummaryOption

    func validate() throws {
        _ = try RTTMethod.parse(method)
        guard runs > 0, iterations > 0, warmup >= 0 else {
            throw ValidationError("--runs and --iterations must be positive, --warmup not negative")
        }
    }

    func run() throws {
        let methods = try RTTMethod.parse(method)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture =
            try socket.map { RTTFixture(socket: $0) }
            ?? RTTFixture(directory: directory, methods: methods, identityPeers: identityPeers)
        defer { fixture.stop() }

        let placements = (placement.isEmpty ? RoundTripPlacement.allCases : placement).filter(\.isPossible)
        let comparison = RoundTripComparison(
            directory: directory, iterations: iterations, warmup: warmup, runs: runs, placements: placements)
        var reports: [RTTReport] = []
        var records: [SummaryRecord] = []
        // Every app registers while the benchmark is dumpable, then it hardens itself as CordonKit
        // does, so the data calls are answered to an ordinary user (RTTCall).
        var connections: [(RTTCall, RawUnixSocket)] = []
        for method in methods {
            guard let call = try fixture.call(method) else {
                let reason = fixture.skipped[method] ?? "not set up"
                FileHandle.standardError.write(Data("rtt: \(method.rawValue) skipped: \(reason)\n".utf8))
                records += RTTReport.skippedRecords(method: method.rawValue, placements: placements, reason: reason)
                continue
            }
            let agent = try RoundTripComparison.connect(
                name: method.rawValue, socketPath: fixture.socket, calls: call.register.map { [$0] } ?? [])
            connections.append((call, agent))
        }
        if connections.contains(where: { $0.0.register != nil }) { try ProcessHardening.disableDumping() }
        for (call, agent) in connections {
            let report = try comparison.run(
                name: call.method.rawValue, request: call.request, agent: agent, prelude: call.prelude)
            reports.append(report)
            records += report.summaryRecords
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(reports), as: UTF8.self))
        } else {
            for report in reports { report.printTable() }
        }
        try summary.append(records)
    }
}
