import Foundation

/// The fan-out figures: per subscriber count, cordond's `Lock` → last `DidLock` against
/// dbus-daemon's signal → last receiver, and their ratio.
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

        init(subscribers: Int, cordond: [FanoutSample], dbusDaemon: [FanoutSample]) {
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

    static let target = "median <= 0.5x dbus-daemon at 1000 subscribers"
    static let targetRatio = 0.5
    static let targetSubscribers = 1000

    let runs: Int
    let rows: [Row]
    let target: String
    /// Whether the target holds; nil when 1,000 subscribers were not measured.
    let pass: Bool?

    init(runs: Int, rows: [Row]) {
        self.runs = runs
        self.rows = rows
        target = Self.target
        pass = rows.first { $0.subscribers == Self.targetSubscribers }.map { $0.medianRatio <= Self.targetRatio }
    }

    func printTable() {
        let format = { (value: Double) in String(format: "%10.1f", value) }
        print("fanout: Lock → DidLock at the last of N subscribers (cordond) vs one signal → the last of N")
        print("sd-bus connections (dbus-daemon); one receiver thread with one epoll loop each; \(runs) runs per N")
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
        let verdict = pass.map { $0 ? "PASS" : "FAIL" } ?? "not measured (add 1000 to --subscribers)"
        print("target: \(target): \(verdict)")
    }
}
