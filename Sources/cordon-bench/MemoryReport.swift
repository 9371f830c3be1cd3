import CordonBenchSummary
import Foundation

/// Resident memory of cordond and dbus-daemon, idle and with many clients, against the targets:
/// each figure the median of the runs (a fresh daemon each), with every run's VmRSS listed.
struct MemoryReport: Codable {
    /// One daemon's figures.
    struct Daemon: Codable {
        let idle: ProcessMemory
        /// After the clients connected (cordond: registered and subscribed).
        let withClients: ProcessMemory
        /// After one event was broadcast to every client.
        let afterBroadcast: ProcessMemory

        /// The larger VmRSS with the clients, before or after the broadcast.
        var loadedRssKiB: Int { max(withClients.rssKiB, afterBroadcast.rssKiB) }

        /// Each reading's median over `runs` (VmRSS, its peak and Pss separately).
        static func median(_ runs: [Daemon]) -> Daemon {
            func median(_ readings: [ProcessMemory]) -> ProcessMemory {
                let middle = { (values: [Int]) in values.sorted()[values.count / 2] }
                let pss = readings.compactMap(\.pssKiB)
                return ProcessMemory(
                    rssKiB: middle(readings.map(\.rssKiB)), peakRssKiB: middle(readings.map(\.peakRssKiB)),
                    pssKiB: pss.count == readings.count ? middle(pss) : nil)
            }
            return Daemon(
                idle: median(runs.map(\.idle)), withClients: median(runs.map(\.withClients)),
                afterBroadcast: median(runs.map(\.afterBroadcast)))
        }
    }

    /// Targets in decimal megabytes (10^6 bytes), the stricter reading of "MB".
    static let idleTargetMB = 30.0
    static let loadedTargetMB = 80.0

    let apps: Int
    /// Of the apps, how many also stored a record, read it back and read a token code.
    let activeApps: Int
    /// The median of the runs.
    let cordond: Daemon
    let dbusDaemon: Daemon
    let cordondRuns: [Daemon]
    let dbusDaemonRuns: [Daemon]
    let idlePass: Bool
    let loadedPass: Bool

    init(apps: Int, activeApps: Int, cordondRuns: [Daemon], dbusDaemonRuns: [Daemon]) {
        self.apps = apps
        self.activeApps = activeApps
        self.cordondRuns = cordondRuns
        self.dbusDaemonRuns = dbusDaemonRuns
        cordond = Daemon.median(cordondRuns)
        dbusDaemon = Daemon.median(dbusDaemonRuns)
        idlePass =
            (SummaryStatistics.median(cordondRuns.map { Self.megabytes($0.idle.rssKiB) }) ?? .infinity)
            <= Self.idleTargetMB
        loadedPass =
            (SummaryStatistics.median(cordondRuns.map { Self.megabytes($0.loadedRssKiB) }) ?? .infinity)
            <= Self.loadedTargetMB
    }

    static func megabytes(_ kib: Int) -> Double { Double(kib) * 1024 / 1_000_000 }

    /// The two targets, each run's cordond VmRSS in MB.
    var summaryRecords: [SummaryRecord] {
        let note =
            "VmRSS of a fresh cordond per run; \(activeApps) of the \(apps) apps also store a 1 KiB record, "
            + "read it back and read a TOTP code"
        return [
            SummaryRecord(
                benchmark: "memory", subject: "cordond resident, idle", comparison: .atMost,
                targetValue: Self.idleTargetMB, unit: "MB", baseline: nil,
                values: cordondRuns.map { Self.megabytes($0.idle.rssKiB) }),
            SummaryRecord(
                benchmark: "memory", subject: "cordond resident, \(apps) apps", comparison: .atMost,
                targetValue: Self.loadedTargetMB, unit: "MB", baseline: nil,
                values: cordondRuns.map { Self.megabytes($0.loadedRssKiB) }, note: note),
        ]
    }

    func printTable() {
        let cell = { (memory: ProcessMemory) -> String in
            let pss = memory.pssMiB.map { String(format: "%7.1f", $0) } ?? "      –"
            return String(format: "%7.1f", memory.rssMiB) + " " + pss
        }
        print(
            "memory: VmRSS and Pss (MiB) of each daemon, idle and with \(apps) clients "
                + "(median of \(cordondRuns.count) runs, a fresh daemon each)")
        print("  cordond clients: \(apps) apps, each Register + Subscribe with its token (2 connections per app);")
        print("  \(activeApps) of them also Storage.Put a 1 KiB record, Storage.Get it and Tokens.Code a TOTP")
        print("  dbus-daemon clients: \(apps) sd-bus connections, each Hello + AddMatch")
        print("                                 cordond         dbus-daemon")
        print("                              RSS     Pss       RSS     Pss")
        let rows: [(String, ProcessMemory, ProcessMemory)] = [
            ("idle", cordond.idle, dbusDaemon.idle),
            ("with \(apps) clients", cordond.withClients, dbusDaemon.withClients),
            ("after one broadcast", cordond.afterBroadcast, dbusDaemon.afterBroadcast),
        ]
        for (label, agent, bus) in rows {
            print(label.padding(toLength: 26, withPad: " ", startingAt: 0) + cell(agent) + "   " + cell(bus))
        }
        let list = { (values: [Int]) in values.map { String(format: "%.1f", Self.megabytes($0)) }.joined(separator: " ")
        }
        print(
            "cordond VmRSS per run, MB: idle \(list(cordondRuns.map(\.idle.rssKiB))); with \(apps) apps "
                + list(cordondRuns.map(\.loadedRssKiB)))
        let verdict = { (pass: Bool) in pass ? "PASS" : "FAIL" }
        print(
            String(
                format: "target: cordond idle <= %.0f MB: %.1f MB %@; with %d apps <= %.0f MB: %.1f MB %@ (medians)",
                Self.idleTargetMB, SummaryStatistics.median(cordondRuns.map { Self.megabytes($0.idle.rssKiB) }) ?? 0,
                verdict(idlePass), apps, Self.loadedTargetMB,
                SummaryStatistics.median(cordondRuns.map { Self.megabytes($0.loadedRssKiB) }) ?? 0,
                verdict(loadedPass)))
    }
}
