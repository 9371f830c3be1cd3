import ArgumentParser
import Dispatch
import Foundation

/// `cordon-bench rtt`: `GetStatus` over the agent's socket against a raw Unix-socket echo.
struct RTTBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtt",
        abstract: "Round trip of GetStatus over the socket vs a raw Unix-socket echo of the same sizes.",
        discussion: """
            Both sides use the same blocking client; the echo server answers with a message as long
            as the agent's reply, so the ratio is what the agent adds to a bare socket round trip.
            Without --socket a cordond next to this binary is started on a temporary directory.
            """)

    @Option(help: "Round trips measured per side.")
    var iterations = 20000
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

        let comparison = RoundTripComparison(directory: directory, iterations: iterations, warmup: warmup)
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
