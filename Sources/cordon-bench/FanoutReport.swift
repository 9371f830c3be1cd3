import CordonBenchSummary
import Foundation

/// The fan-out figures: per subscriber count, cordond's `Lock` → last `DidLock` against
/// dbus-daemon's signal → last receiver, and their ratio: over all rounds of all runs, and per run.
struct FanoutReport: Codable {
    /// One subscriber count.
    struct Row: Codable {
        let subscribers: Int
        /// Lock sent → the last subscriber has DidLock.
        let cordond: LatencyStats
        /// Signal emitted → the last receiver has dispatched it.
        let dbusDaemon: LatencyStats
        let medianRatio: Double
        let p99Ratio: Double
        /// Median CPU per round: the daemon's (all threads) and the receiving thread's.
        let cordondCPUMicroseconds: Double
        let cordondReceiverCPUMicroseconds: Double
        let dbusDaemonCPUMicroseconds: Double
        let dbusReceiverCPUMicroseconds: Double
        /// Each run's median ratio (cordond / dbus-daemon), in the order of the runs.
        let runRatios: [Double]

        /// The rounds of each run, per side (`cordond[i]` and `dbusDaemon[i]` alternated).
        init(subscribers: Int, runs: [(cordond: [FanoutSample], dbusDaemon: [FanoutSample])]) {
            runRatios = runs.map { run in
                LatencyStats(samples: run.cordond.map(\.wall)).medianMicroseconds
                    / LatencyStats(samples: run.dbusDaemon.map(\.wall)).medianMicroseconds
            }
            let cordond = runs.flatMap(\.cordond)
            let dbusDaemon = runs.flatMap(\.dbusDaemon)
            self.subscribers = subscribers
            self.cordond = LatencyStats(samples: cordond.map(\.wall))
            self.dbusDaemon = LatencyStats(samples: dbusDaemon.map(\.wall))
            medianRatio = self.cordond.medianMicroseconds / self.dbusDaemon.medianMicroseconds
            p99Ratio = self.cordond.p99Microseconds / self.dbusDaemon.p99Microseconds
            let median = { (samples: [UInt64]) in LatencyStats(samples: samples).medianMicroseconds }
            cordondCPUMicroseconds = median(cordond.map(\.daemonCPU))
            cordondReceiverCPUMicroseconds = median(cordond.map(\.receiverCPU))
            dbusDaemonCPUMicroseconds = median(dbusDaemon.map(\.daemonCPU))
            dbusReceiverCPUMicroseconds = median(dbusDaemon.map(\.receiverCPU))
        }
    }

    static let target = "median of the runs' ratios <= 0.4x dbus-daemon at 1000 subscribers, no run above 0.5x"
    static let targetRatio = 0.4
    static let everyRunRatio = 0.5
    static let targetSubscribers = 1000

    /// Timed rounds per run, subscriber count and side.
    let runs: Int
    /// Independent runs (fresh subscribers each) per subscriber count.
    let repeats: Int
    let rows: [Row]
    let target: String
    /// Whether the target holds; nil when 1,000 subscribers were not measured.
    let pass: Bool?

    init(runs: Int, repeats: Int, rows: [Row]) {
        self.runs = runs
        self.repeats = repeats
        self.rows = rows
        target = Self.target
        pass = rows.first { $0.subscribers == Self.targetSubscribers }.map { row in
            let median = SummaryStatistics.median(row.runRatios) ?? .infinity
            return median <= Self.targetRatio && row.runRatios.allSatisfy { $0 <= Self.everyRunRatio }
        }
    }

    /// The target as a summary record: each run's ratio at 1,000 subscribers.
    var summaryRecord: SummaryRecord {
        let subject = "one event to 1,000 subscribers"
        let baseline = "dbus-daemon signal to 1,000 sd-bus connections"
        guard let row = rows.first(where: { $0.subscribers == Self.targetSubscribers }) else {
            return .skipped(
                benchmark: "fanout", subject: subject, comparison: .atMost, targetValue: Self.targetRatio,
                everyRunLimit: Self.everyRunRatio, unit: "×", baseline: baseline,
                reason: "1000 not in --subscribers")
        }
        return SummaryRecord(
            benchmark: "fanout", subject: subject, comparison: .atMost, targetValue: Self.targetRatio,
            everyRunLimit: Self.everyRunRatio, unit: "×", baseline: baseline, values: row.runRatios,
            note: "each run \(runs) alternating rounds per side, fresh subscribers")
    }

    func printTable() {
        let format = { (value: Double) in String(format: "%10.1f", value) }
        print("fanout: Lock → DidLock at the last of N subscribers (cordond) vs one signal → the last of N")
        print(
            "sd-bus connections (dbus-daemon); one receiver thread with one epoll loop each; \(repeats) runs of "
                + "\(runs) rounds per N (the table is over all rounds)")
        print("          cordond µs              dbus-daemon µs          ratio (cordond / dbus)")
        print("     N      median         p99      median         p99      median      p99")
        for row in rows {
            print(
                String(format: "%6d", row.subscribers) + "  " + format(row.cordond.medianMicroseconds) + "  "
                    + format(row.cordond.p99Microseconds) + "  " + format(row.dbusDaemon.medianMicroseconds) + "  "
                    + format(row.dbusDaemon.p99Microseconds)
                    + String(format: "    %6.2f×   %6.2f×", row.medianRatio, row.p99Ratio))
        }
        print("median CPU per round, µs: the daemon (all threads) / the receiving thread")
        print("     N     cordond   receiver    dbus-daemon   receiver")
        for row in rows {
            print(
                String(
                    format: "%6d  %10.1f %10.1f    %10.1f %10.1f", row.subscribers, row.cordondCPUMicroseconds,
                    row.cordondReceiverCPUMicroseconds, row.dbusDaemonCPUMicroseconds, row.dbusReceiverCPUMicroseconds))
        }
        print("median ratio per run (cordond / dbus-daemon)")
        for row in rows {
            let median = SummaryStatistics.median(row.runRatios) ?? 0
            print(
                String(format: "%6d  ", row.subscribers)
                    + row.runRatios.map { String(format: "%.2f×", $0) }.joined(separator: " ")
                    + String(
                        format: "   median %.2f×, %.2f–%.2f×", median, row.runRatios.min() ?? 0,
                        row.runRatios.max() ?? 0))
        }
        let verdict = pass.map { $0 ? "PASS" : "FAIL" } ?? "not measured (add 1000 to --subscribers)"
        print("target: \(target): \(verdict)")
    }
}
