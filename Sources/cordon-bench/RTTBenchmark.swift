import ArgumentParser
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
            client on CPU 0, agent and echo on CPU 1; unpinned) is measured --runs times. Without \
            --socket a cordond next to this binary is started on a temporary directory.
            """)

    @Option(help: "Round trips measured per side in each run.")
    var iterations = 10000
    @Option(help: "Runs per placement (the report gives their spread).")
    var runs = 5
    @Option(help: "A placement to measure (one-cpu, split, unpinned); repeat for several. Default: all.")
    var placement: [RoundTripPlacement] = []
    @Option(help: "Round trips before measuring.")
    var warmup = 2000
    @Option(help: "Use an already running agent at this socket.")
    var socket: String?
    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var daemon: Process?
        let socketPath: String
        if let socket {
            socketPath = socket
        } else {
            let started = try DaemonLauncher.start(in: directory)
            daemon = started.process
            socketPath = started.socket
        }
        defer {
            daemon?.terminate()
            daemon?.waitUntilExit()
        }

        let comparison = RoundTripComparison(
            directory: directory, iterations: iterations, warmup: warmup, runs: runs,
            placements: placement.isEmpty ? RoundTripPlacement.allCases : placement)
        var reports: [RTTReport] = []
        for (name, request) in Self.requests {
            reports.append(try comparison.run(name: name, request: request, socketPath: socketPath))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(reports), as: UTF8.self))
        } else {
            for report in reports { report.printTable() }
        }
    }

    /// The calls measured: a status read and a policy check.
    static let requests: [(String, String)] = [
        ("GetStatus", #"{"method":"io.cordon.Agent.GetStatus"}"#),
        (
            "Check",
            #"{"method":"io.cordon.App.Check","parameters":{"action":"pasteboard.paste","target":"com.example.mail","context":{"length":"120"}}}"#
        ),
    ]
}
