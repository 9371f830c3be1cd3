import ArgumentParser
import CCordonBench
import CordonSystem
import Foundation

/// `cordon-bench memory`: resident memory of cordond and dbus-daemon, idle and with many clients.
struct MemoryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Resident memory (VmRSS, Pss) of cordond and dbus-daemon, idle and with N clients.",
        discussion: """
            cordond (next to this binary, temporary directories, insecure fast KDF) is measured after
            start + initialize + unlock, then with N apps com.example.app0… each registered and
            subscribed with its token from this process (the first --active-apps of them also store a
            1 KiB record with Storage.Put, read it back with Storage.Get and read a TOTP code with
            Tokens.Code: each opens its own encrypted store, and the token store is in use), then after
            one Lock/Unlock broadcast to all. The baseline is a private dbus-daemon, idle and with N
            sd-bus connections each holding a match, then after one signal to all. Each of --runs runs
            starts fresh daemons; the figures are the medians. Targets: cordond <= 30 MB idle, <= 80 MB
            with 1,000 apps (VmRSS, the larger of before and after the broadcast; --summary appends them).
            """)

    @Option(help: "Apps (cordond) and connections (dbus-daemon).")
    var apps = 1000
    @Option(help: "Of the apps, how many also store a record, read it back and read a token code.")
    var activeApps = 100
    @Option(help: "Runs, each with fresh daemons (the figures are the medians).")
    var runs = 5
    @Option(help: "Milliseconds to let a daemon settle before each reading.")
    var settleMs = 500
    @Option(help: "The dbus-daemon binary.")
    var dbusDaemon = "/usr/bin/dbus-daemon"
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @OptionGroup var summary: SummaryOption

    func validate() throws {
        guard apps > 0, apps <= 2000 else { throw ValidationError("--apps: from 1 to 2000") }
        guard activeApps >= 0, activeApps <= apps else { throw ValidationError("--active-apps: from 0 to --apps") }
        guard runs > 0 else { throw ValidationError("--runs must be positive") }
    }

    func run() throws {
        try FanoutError.check("setrlimit(RLIMIT_NOFILE)", ccb_raise_nofile(UInt64(3 * apps + 1024)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-memory-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var cordond: [MemoryReport.Daemon] = []
        var bus: [MemoryReport.Daemon] = []
        for run in 0..<runs {
            cordond.append(try measureAgent(directory: directory + "/cordond-\(run)"))
            bus.append(try measureBus(directory: directory + "/dbus-\(run)"))
        }
        let report = MemoryReport(apps: apps, activeApps: activeApps, cordondRuns: cordond, dbusDaemonRuns: bus)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.printTable()
        }
        try summary.append(report.summaryRecords)
    }

    private func measureAgent(directory: String) throws -> MemoryReport.Daemon {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let readers = directory + "/10-bench-code-readers.json"
        try TokensBenchmark.codeReadersPolicy((0..<activeApps).map { "com.example.app\($0)" })
            .write(toFile: readers, atomically: true, encoding: .utf8)
        let agent = try BenchAgent(directory: directory + "/agent", adminPolicies: [readers])
        defer { agent.stop() }
        let idle = try reading(agent.pid)
        let serial = try TokensBenchmark.importToken(
            agent, ["data": "otpauth://totp/bench?secret=\(TokensBenchmark.totpSecret)"])
        let sockets = try SocketSet.apps(socket: agent.socket, count: apps)
        // Registered; now non-dumpable, as the agent demands of an app it stores for (and as
        // CordonKit makes an app), so this runs as an ordinary user too.
        try ProcessHardening.disableDumping()
        let record = Data(repeating: 0x5A, count: 1024).base64EncodedString()
        for app in sockets.registrations.prefix(activeApps) {
            try app.call("io.cordon.Storage.Put", ["name": "record", "value": record])
            let stored = try app.call("io.cordon.Storage.Get", ["name": "record"])
            guard stored["value"] as? String == record else { throw BenchError.daemon("Storage.Get: \(stored)") }
            guard try app.call("io.cordon.Tokens.Code", ["serial": serial])["code"] != nil else {
                throw BenchError.daemon("Tokens.Code gave no code")
            }
        }
        let loaded = try reading(agent.pid)
        _ = try VarlinkFanout(agent: agent, sockets: sockets).round()
        return MemoryReport.Daemon(idle: idle, withClients: loaded, afterBroadcast: try reading(agent.pid))
    }

    private func measureBus(directory: String) throws -> MemoryReport.Daemon {
        let bus = try DBusDaemon(directory: directory, executable: dbusDaemon)
        defer { bus.stop() }
        let idle = try reading(bus.pid)
        let fanout = try DBusFanout(daemon: bus, count: apps)
        let loaded = try reading(bus.pid)
        _ = try fanout.round()
        return MemoryReport.Daemon(idle: idle, withClients: loaded, afterBroadcast: try reading(bus.pid))
    }

    /// The process's memory after `settleMs`.
    private func reading(_ pid: Int32) throws -> ProcessMemory {
        usleep(UInt32(settleMs) * 1000)
        return try ProcessMemory.read(pid: pid)
    }
}
