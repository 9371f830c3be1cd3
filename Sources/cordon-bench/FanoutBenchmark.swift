import ArgumentParser
import CCordonBench
import Foundation

/// `cordon-bench fanout`: one event fanned out to N subscribers, cordond against dbus-daemon.
struct FanoutBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "One event fanned out to N subscribers: cordond's DidLock vs a dbus-daemon signal.",
        discussion: """
            cordond (next to this binary, temporary directories, insecure fast KDF) is initialized and
            unlocked; N connections call io.cordon.App.Subscribe and read their State snapshot. A round
            sends Lock on a separate control connection and times until the last subscriber has a
            complete DidLock frame (then Unlock, untimed). The baseline is a private dbus-daemon with
            N sd-bus connections, each with a match for one signal, and a sender connection that emits
            it; a round times emit → the last receiver's dispatch. Both sides' receivers are one
            thread with one epoll loop (C, CCordonBench); rounds of the two alternate. Each of --repeat             runs sets up fresh subscribers on both sides and times --runs rounds per N; the table is over             all rounds, and each run's median ratio is listed. Target at 1,000 subscribers: the median of             the runs' ratios <= 0.4x dbus-daemon, and no run above 0.5x (--summary appends it).
            """)

    @Option(help: "Subscriber counts, comma-separated.")
    var subscribers = "10,100,1000"
    @Option(help: "Timed rounds per subscriber count and side.")
    var runs = 200
    @Option(name: .customLong("repeat"), help: "Independent runs per subscriber count (fresh subscribers each).")
    var repeats = 5
    @Option(help: "Untimed rounds first (each run).")
    var warmup = 10
    @Option(help: "The dbus-daemon binary.")
    var dbusDaemon = "/usr/bin/dbus-daemon"
    @Option(help: "Also write an SVG line chart here.")
    var svg: String?
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @OptionGroup var summary: SummaryOption

    func validate() throws {
        guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 && $0 <= 4000 }) else {
            throw ValidationError("--subscribers: comma-separated counts from 1 to 4000")
        }
        guard runs > 0, repeats > 0, warmup >= 0 else {
            throw ValidationError("--runs and --repeat must be positive, --warmup not negative")
        }
    }

    var counts: [Int] { subscribers.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() throws {
        let largest = counts.max() ?? 0
        try FanoutError.check("setrlimit(RLIMIT_NOFILE)", ccb_raise_nofile(UInt64(2 * largest + 1024)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-fanout-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try BenchAgent(directory: directory + "/cordond")
        defer { agent.stop() }
        let bus = try DBusDaemon(directory: directory + "/dbus", executable: dbusDaemon)
        defer { bus.stop() }

        var measured: [Int: [(cordond: [FanoutSample], dbusDaemon: [FanoutSample])]] = [:]
        for _ in 0..<repeats {
            for count in counts {
                measured[count, default: []].append(try measure(count: count, agent: agent, bus: bus))
            }
        }
        let rows = counts.map { FanoutReport.Row(subscribers: $0, runs: measured[$0] ?? []) }
        let report = FanoutReport(runs: runs, repeats: repeats, rows: rows)
        if let svg {
            try FanoutChart.svg(report).write(toFile: svg, atomically: true, encoding: .utf8)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.printTable()
            if let svg { print("chart: \(svg)") }
        }
        try summary.append([report.summaryRecord])
    }

    /// One run: `count` fresh subscribers on each side; rounds alternate between the sides.
    private func measure(count: Int, agent: BenchAgent, bus: DBusDaemon) throws -> (
        cordond: [FanoutSample], dbusDaemon: [FanoutSample]
    ) {
        let sockets = try SocketSet.observers(socket: agent.socket, count: count)
        let cordond = try VarlinkFanout(agent: agent, sockets: sockets)
        let dbus = try DBusFanout(daemon: bus, count: count)
        for _ in 0..<warmup {
            _ = try cordond.round()
            _ = try dbus.round()
        }
        var cordondSamples: [FanoutSample] = []
        var dbusSamples: [FanoutSample] = []
        for _ in 0..<runs {
            cordondSamples.append(try cordond.round())
            dbusSamples.append(try dbus.round())
        }
        return (cordondSamples, dbusSamples)
    }
}
