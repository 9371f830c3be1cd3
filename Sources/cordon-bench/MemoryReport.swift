import Foundation

/// Resident memory of cordond and dbus-daemon, idle and with many clients, against the targets.
struct MemoryReport: Codable {
    /// One daemon's figures.
    struct Daemon: Codable {
        let idle: ProcessMemory
        /// After the clients connected (cordond: registered and subscribed).
        let withClients: ProcessMemory
        /// After one event was broadcast to every client.
        let afterBroadcast: ProcessMemory
    }

    /// Targets in decimal megabytes (10^6 bytes), the stricter reading of "MB".
    static let idleTargetMB = 30.0
    static let loadedTargetMB = 80.0

    let apps: Int
    let cordond: Daemon
    let dbusDaemon: Daemon
    let idlePass: Bool
    let loadedPass: Bool

    init(apps: Int, cordond: Daemon, dbusDaemon: Daemon) {
        self.apps = apps
        self.cordond = cordond
        self.dbusDaemon = dbusDaemon
        idlePass = Self.megabytes(cordond.idle.rssKiB) <= Self.idleTargetMB
        loadedPass =
            Self.megabytes(max(cordond.withClients.rssKiB, cordond.afterBroadcast.rssKiB)) <= Self.loadedTargetMB
    }

    static func megabytes(_ kib: Int) -> Double { Double(kib) * 1024 / 1_000_000 }

    func printTable() {
        let cell = { (memory: ProcessMemory) -> String in
            let pss = memory.pssMiB.map { String(format: "%7.1f", $0) } ?? "      –"
            return String(format: "%7.1f", memory.rssMiB) + " " + pss
        }
        print("memory: VmRSS and Pss (MiB) of each daemon, idle and with \(apps) clients")
        print("  cordond clients: \(apps) apps, each Register + Subscribe with its token (2 connections per app)")
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
        let verdict = { (pass: Bool) in pass ? "PASS" : "FAIL" }
        print(
            String(
                format: "target: cordond idle <= %.0f MB: %.1f MB %@; with %d apps <= %.0f MB: %.1f MB %@",
                Self.idleTargetMB, Self.megabytes(cordond.idle.rssKiB), verdict(idlePass), apps, Self.loadedTargetMB,
                Self.megabytes(max(cordond.withClients.rssKiB, cordond.afterBroadcast.rssKiB)), verdict(loadedPass)))
    }
}
