import ArgumentParser
import Foundation

/// `cordon-bench enforce`: from a revocation to the last of N apps that never acknowledge being
/// frozen by the agent (SIGSTOP through their pidfds), as `lock.onAckTimeout: freeze` says.
struct EnforceBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enforce",
        abstract: "Time from a revocation to the last of N non-acknowledging apps frozen.",
        discussion: """
            Starts cordond with lock.onAckTimeout freeze and the given deadline, N apps (this binary's hidden \
            deaf-app mode) that register and subscribe but never acknowledge, then repeatedly logs out and \
            polls /proc/PID/stat until every app is stopped (T), and unlocks again until every app runs. \
            Reports the time from Logout to the last app frozen, and that time less the deadline (the \
            agent's own enforcement latency).
            """)

    @Option(help: "Number of non-acknowledging apps.")
    var apps = 100

    @Option(help: "Measured revocations.")
    var runs = 5

    @Option(help: "The acknowledgement deadline in milliseconds (lock.ackDeadlineMs).")
    var deadlineMs = 100

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    func run() throws {
        let directory = NSTemporaryDirectory() + "cordon-bench-enforce-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/admin", withIntermediateDirectories: true)
        let policy =
            #"{"schema": "cordon.policy.v1", "lock": {"onAckTimeout": "freeze", "ackDeadlineMs": \#(deadlineMs)}}"#
        try policy.write(toFile: directory + "/admin/enforce.json", atomically: true, encoding: .utf8)
        let agent = try BenchAgent(directory: directory)
        defer { agent.stop() }
        let children = try (0..<apps).map { index in
            try DeafApp.spawn(socket: agent.socket, appId: "bench.deaf\(index)")
        }
        defer {
            for child in children {
                kill(child.processIdentifier, SIGKILL)
                kill(child.processIdentifier, SIGCONT)
                child.waitUntilExit()
            }
        }
        let pids = children.map(\.processIdentifier)
        try Self.waitUntil("all \(apps) apps are subscribed", timeout: 120) {
            let listed = try agent.control.call("io.cordon.Agent.ListApps")["apps"] as? [[String: Any]] ?? []
            return listed.filter { $0["subscribed"] as? Bool == true }.count == apps
        }
        var samples: [UInt64] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try agent.control.call("io.cordon.Agent.Logout")
            try Self.waitUntil("every app is frozen", timeout: 60) { pids.allSatisfy { Self.state(of: $0) == "T" } }
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
            try agent.unlock()
            try Self.waitUntil("every app runs again", timeout: 60) { pids.allSatisfy { Self.state(of: $0) != "T" } }
        }
        let total = LatencyStats(samples: samples)
        let deadline = UInt64(deadlineMs) * 1_000_000
        let beyond = LatencyStats(samples: samples.map { $0 > deadline ? $0 - deadline : 0 })
        let report = EnforceReport(
            apps: apps, runs: runs, deadlineMs: deadlineMs, toLastFrozen: total, beyondDeadline: beyond)
        print(json ? try report.json() : report.table())
    }

    /// The one-letter state of `pid` from `/proc/PID/stat`.
    static func state(of pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Polls `condition` every millisecond until it holds, or fails after `timeout` seconds.
    static func waitUntil(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw BenchError.daemon("timed out waiting until \(what)") }
            usleep(1000)
        }
    }
}

/// The figures of `cordon-bench enforce`.
struct EnforceReport: Codable {
    let apps: Int
    let runs: Int
    let deadlineMs: Int
    /// From `Logout` to the last app stopped.
    let toLastFrozen: LatencyStats
    /// The same less the deadline: what the agent adds.
    let beyondDeadline: LatencyStats

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    func table() -> String {
        let ms = { (value: Double) in String(format: "%.1f ms", value / 1000) }
        return """
            enforce: \(apps) apps that never acknowledge, deadline \(deadlineMs) ms, \(runs) revocations
              Logout → last app frozen:  median \(ms(toLastFrozen.medianMicroseconds)), p99 \(ms(toLastFrozen.p99Microseconds))
              beyond the deadline:       median \(ms(beyondDeadline.medianMicroseconds)), p99 \(ms(beyondDeadline.p99Microseconds))
            """
    }
}
