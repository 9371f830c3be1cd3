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

        let request = Array(#"{"method":"io.cordon.Agent.GetStatus"}"#.utf8) + [0]
        let agent = try RawUnixSocket.connect(to: socketPath)
        try agent.send(request)
        let replyLength = try agent.receiveMessage()
        let agentStats = try measure(agent, request: request)

        let echoPath = directory + "/echo.sock"
        let listener = try RawUnixSocket.listen(at: echoPath)
        let reply = [UInt8](repeating: 0x20, count: replyLength) + [0]
        let echoThread = Thread {
            guard let connection = try? listener.accept() else { return }
            while (try? connection.receiveMessage()) != nil {
                if (try? connection.send(reply)) == nil { return }
            }
        }
        echoThread.start()
        let echo = try RawUnixSocket.connect(to: echoPath)
        let echoStats = try measure(echo, request: request)

        let report = RTTReport(
            requestBytes: request.count, replyBytes: replyLength + 1, agent: agentStats, rawEcho: echoStats,
            medianRatio: agentStats.medianMicroseconds / echoStats.medianMicroseconds,
            p99Ratio: agentStats.p99Microseconds / echoStats.p99Microseconds, target: "median ratio <= 2.0")
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.printTable()
        }
    }

    private func measure(_ socket: RawUnixSocket, request: [UInt8]) throws -> LatencyStats {
        for _ in 0..<warmup {
            try socket.send(request)
            _ = try socket.receiveMessage()
        }
        var samples = [UInt64]()
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            try socket.send(request)
            _ = try socket.receiveMessage()
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return LatencyStats(samples: samples)
    }
}

/// The result of `cordon-bench rtt`.
struct RTTReport: Codable {
    let requestBytes: Int
    let replyBytes: Int
    let agent: LatencyStats
    let rawEcho: LatencyStats
    let medianRatio: Double
    let p99Ratio: Double
    let target: String

    func printTable() {
        let format = { (value: Double) in String(format: "%9.1f", value) }
        print("rtt: GetStatus over the agent socket vs raw Unix-socket echo (\(agent.count) round trips each)")
        print("                      median µs     p99 µs    mean µs")
        print(
            "cordond GetStatus     \(format(agent.medianMicroseconds))  \(format(agent.p99Microseconds))  "
                + "\(format(agent.meanMicroseconds))")
        print(
            "raw socket echo       \(format(rawEcho.medianMicroseconds))  \(format(rawEcho.p99Microseconds))  "
                + "\(format(rawEcho.meanMicroseconds))")
        print(
            String(format: "ratio (agent / raw)   median %.2f×, p99 %.2f×   target: %@", medianRatio, p99Ratio, target))
    }
}
