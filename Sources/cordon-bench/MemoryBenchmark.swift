import ArgumentParser
import CCordonBench
import Foundation

/// `cordon-bench memory`: resident memory of cordond and dbus-daemon, idle and with many clients.
struct MemoryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Resident memory (VmRSS, Pss) of cordond and dbus-daemon, idle and with N clients.",
        discussion: """
            cordond (next to this binary, temporary directories, insecure fast KDF) is measured after
            start + initialize + unlock, then with N apps com.example.app0… each registered and
            subscribed with its token from this process, then after one Lock/Unlock broadcast to all.
            The baseline is a private dbus-daemon, idle and with N sd-bus connections each holding a
            match, then after one signal to all. Targets: cordond <= 30 MB idle, <= 80 MB with 1,000 apps.
            """)

    @Option(help: "Apps (cordond) and connections (dbus-daemon).")
    var apps = 1000
    @Option(help: "Milliseconds to let a daemon settle before each reading.")
    var settleMs = 500
    @Option(help: "The dbus-daemon binary.")
    var dbusDaemon = "/usr/bin/dbus-daemon"
    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard apps > 0, apps <= 2000 else { throw ValidationError("--apps: from 1 to 2000") }
    }

    func run() throws {
        try FanoutError.check("setrlimit(RLIMIT_NOFILE)", ccb_raise_nofile(UInt64(3 * apps + 1024)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-memory-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let cordond = try measureAgent(directory: directory + "/cordond")
        let bus = try measureBus(directory: directory + "/dbus")
        let report = MemoryReport(apps: apps, cordond: cordond, dbusDaemon: bus)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.printTable()
        }
    }

    private func measureAgent(directory: String) throws -> MemoryReport.Daemon {
        let agent = try BenchAgent(directory: directory)
        defer { agent.stop() }
        let idle = try reading(agent.pid)
        let sockets = try SocketSet.apps(socket: agent.socket, count: apps)
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
