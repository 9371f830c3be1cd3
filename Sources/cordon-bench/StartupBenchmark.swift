import ArgumentParser
import CordonBenchSummary
import Dispatch
import Foundation

/// `cordon-bench startup`: from the first connection on a socket-activated socket to the first reply.
struct StartupBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Time from the first connection on an activated socket to cordond's first reply.",
        discussion: """
            Each run starts a fresh `systemd-socket-activate -l SOCKET cordond ...` (which execs cordond
            on the first connection), connects, sends GetStatus and times until the reply, then stops
            the process. The database is created by an untimed first run and reused, as after install.
            The baseline is the same connect + GetStatus against an agent that is already running.
            Target: the activated first reply <= 20 ms (--summary appends each run's).
            """)

    @Option(help: "Fresh processes measured (each one run).")
    var runs = 30
    @Option(help: "The systemd-socket-activate binary.")
    var launcher = "/usr/bin/systemd-socket-activate"
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @OptionGroup var summary: SummaryOption

    /// The target for the activated first reply, milliseconds.
    static let targetMs = 20.0

    struct Report: Codable {
        let runs: Int
        let activatedStartup: LatencyStats
        let runningAgent: LatencyStats
    }

    func run() throws {
        guard FileManager.default.isExecutableFile(atPath: launcher) else {
            throw BenchError.daemon("\(launcher) not found (install systemd)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-startup-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try measureOnce(directory: directory, run: 0)  // Creates the database; not timed.
        var startup: [UInt64] = []
        var warm: [UInt64] = []
        for run in 1...max(1, runs) {
            let sample = try measureOnce(directory: directory, run: run)
            startup.append(sample.first)
            warm.append(sample.warm)
        }
        let report = Report(
            runs: startup.count, activatedStartup: LatencyStats(samples: startup),
            runningAgent: LatencyStats(samples: warm))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            Self.printTable(report)
        }
        try summary.append([
            SummaryRecord(
                benchmark: "startup", subject: "socket-activated first GetStatus reply", comparison: .atMost,
                targetValue: Self.targetMs, unit: "ms", baseline: nil, values: startup.map { Double($0) / 1e6 },
                note: String(
                    format: "a connect + GetStatus to the running agent: median %.2f ms",
                    report.runningAgent.medianMicroseconds / 1000))
        ])
    }

    /// One fresh activated process: the first reply's latency, then a connect + GetStatus once it runs.
    private func measureOnce(directory: String, run: Int) throws -> (first: UInt64, warm: UInt64) {
        let socket = directory + "/agent-\(run).sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher)
        process.arguments = [
            "-l", socket, DaemonLauncher.cordondPath, "--runtime-dir", directory + "/run", "--data-dir",
            directory + "/data", "--config-dir", directory + "/config", "--admin-policy-dir",
            directory + "/admin", "--trust-dir", directory + "/trust", "--log-level", "warning",
            "--idle-timeout", "0",
            // Admin inputs from flags and temporary directories: cordond starts with them only in
            // test mode (as DaemonLauncher's agents do); without it, it refuses to start.
            "--test-mode",
        ]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        // The launcher binds before it waits; poll (bounded) until the socket exists.
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, waited < 5000 else { throw BenchError.daemon("no activated socket at \(socket)") }
            usleep(1000)
            waited += 1
        }
        // The path appears at bind(), a moment before listen(): retry a refused connect (bounded).
        var first: UInt64?
        for _ in 0..<1000 where first == nil {
            do {
                first = try Self.timedStatus(socket: socket)
            } catch BenchError.system(let call, let code) where call.hasPrefix("connect") && code == ECONNREFUSED {
                usleep(200)
            }
        }
        guard let first else { throw BenchError.daemon("the activated socket never accepted") }
        let warm = try Self.timedStatus(socket: socket)
        return (first, warm)
    }

    /// Connect, send GetStatus, read the reply: nanoseconds.
    static func timedStatus(socket: String) throws -> UInt64 {
        let request = Array(#"{"method":"io.cordon.Agent.GetStatus"}"#.utf8) + [0]
        let start = DispatchTime.now().uptimeNanoseconds
        let connection = try RawUnixSocket.connect(to: socket)
        try connection.send(request)
        _ = try connection.receiveMessage()
        return DispatchTime.now().uptimeNanoseconds - start
    }

    static func printTable(_ report: Report) {
        let format = { (value: Double) in String(format: "%10.1f", value) }
        let rows: [(String, LatencyStats)] = [
            ("activated start", report.activatedStartup), ("running agent", report.runningAgent),
        ]
        print("startup: first connection on an activated socket → first GetStatus reply (\(report.runs) fresh runs)")
        print("                      median µs      p99 µs     mean µs")
        for (label, stats) in rows {
            print(
                label.padding(toLength: 20, withPad: " ", startingAt: 0) + "\(format(stats.medianMicroseconds))  "
                    + "\(format(stats.p99Microseconds))  \(format(stats.meanMicroseconds))")
        }
        print(
            String(
                format: "exec + start-up cost  median %.1f ms over a warm connect + GetStatus",
                (report.activatedStartup.medianMicroseconds - report.runningAgent.medianMicroseconds) / 1000))
    }
}
