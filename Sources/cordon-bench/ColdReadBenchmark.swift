import ArgumentParser
import CCordonLinux
import CordonBenchSummary
import CordonLocking
import CordonSystem
import Dispatch
import Foundation
import Synchronization

/// `cordon-bench coldread`: whether reads that miss the agent's held records (each one a trip to
/// the store thread and SQLite, with the file's pages dropped from the page cache first) stall
/// the other clients (docs/PERFORMANCE.md, "Data calls on the loop"). One client calls
/// `GetStatus` back to back for the whole run; another, a registered storage app, now and then
/// reads 100 records none of which the agent holds (a `Put` before each burst drops what it held;
/// `posix_fadvise(DONTNEED)` drops the file's clean pages). The first client's p99 during the
/// bursts is compared with its p99 between them, in the same run. Target: ≤ 2×.
struct ColdReadBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coldread",
        abstract: "Other clients' GetStatus p99 during bursts of cold Storage.Get misses, against idle.")

    static let target = 2.0

    @Option(help: "Runs (the report gives their spread).")
    var runs = 3
    @Option(help: "Bursts of cold reads per run.")
    var bursts = 20
    @Option(help: "Records read per burst.")
    var records = 100

    @OptionGroup var summary: SummaryOption

    func run() throws {
        var ratios: [Double] = []
        var lines: [String] = []
        for run in 1...runs {
            let (idle, busy, burstMs) = try Self.measure(bursts: bursts, records: records)
            let ratio = busy.p99Microseconds / max(idle.p99Microseconds, 0.001)
            ratios.append(ratio)
            lines.append(
                String(
                    format: "  run %d: GetStatus p99 idle %.1f µs (%d calls), during bursts %.1f µs (%d calls): %.2f×;"
                        + " a burst of %d cold reads took %.1f ms (median)",
                    run, idle.p99Microseconds, idle.count, busy.p99Microseconds, busy.count, ratio, records, burstMs))
        }
        print("GetStatus of another client during cold Storage.Get bursts (\(bursts) bursts of \(records)):")
        lines.forEach { print($0) }
        try summary.append([
            SummaryRecord(
                benchmark: "coldread", subject: "GetStatus p99 during \(records) cold Storage.Get misses",
                comparison: .atMost, targetValue: Self.target, unit: "×", baseline: "its idle p99", values: ratios,
                note: "\(bursts) bursts per run, unpinned")
        ])
    }

    /// One run: the `GetStatus` latencies between bursts and during them, and the median burst.
    static func measure(bursts: Int, records: Int) throws -> (LatencyStats, LatencyStats, Double) {
        let directory =
            NSTemporaryDirectory() + "cordon-bench-coldread-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try BenchAgent(directory: directory + "/agent")
        defer { agent.stop() }
        let app = "com.example.bench.storage"
        let reader = try VarlinkConnection(path: agent.socket)
        // As an ordinary user the agent reads a registering process's executable through /proc,
        // which a non-dumpable process hides from its own user: register dumpable, then harden as
        // CordonKit does before the data calls (each run has an agent, and a registration, of its own).
        _ = cordon_set_dumpable()
        try reader.call("io.cordon.App.Register", ["appId": app])
        try ProcessHardening.disableDumping()
        let value = Data(repeating: 0x5A, count: 1024).base64EncodedString()
        for index in 0..<records {
            try reader.call("io.cordon.Storage.Put", ["name": "record-\(index)", "value": value])
        }
        let file = directory + "/agent/data/storage/\(app).sqlite"

        // The other client: GetStatus back to back, each call's start and duration.
        let samples = Locked<[(start: UInt64, nanoseconds: UInt64)]>([])
        let stop = Atomic<Bool>(false)
        let status = try RawUnixSocket.connect(to: agent.socket)
        let request = Array(#"{"method":"io.cordon.Agent.GetStatus"}"#.utf8) + [0]
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        Thread.detachNewThread {
            var local: [(UInt64, UInt64)] = []
            local.reserveCapacity(200_000)
            do {
                while !stop.load(ordering: .relaxed) {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try status.send(request)
                    _ = try status.receiveMessage()
                    local.append((start, DispatchTime.now().uptimeNanoseconds - start))
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            samples.withLock { $0 = local.map { (start: $0.0, nanoseconds: $0.1) } }
            done.signal()
        }
        usleep(200_000)
        var windows: [(UInt64, UInt64)] = []
        for _ in 0..<bursts {
            // A write drops every record the agent held; the page cache drops the file's pages.
            try reader.call("io.cordon.Storage.Put", ["name": "record-0", "value": value])
            Self.dropPageCache(file)
            usleep(20_000)
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<records { try reader.call("io.cordon.Storage.Get", ["name": "record-\(index)"]) }
            windows.append((start, DispatchTime.now().uptimeNanoseconds))
            usleep(50_000)
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        if let problem = failure.withLock({ $0 }) { throw BenchError.daemon("the GetStatus client failed: \(problem)") }
        let all = samples.withLock { $0 }
        // A call is "during" a burst when it started inside one; the first 100 ms are warm-up.
        let warm = (all.first?.start ?? 0) + 100_000_000
        var idle: [UInt64] = []
        var busy: [UInt64] = []
        for sample in all where sample.start >= warm {
            let inside = windows.contains { sample.start >= $0.0 && sample.start <= $0.1 }
            if inside { busy.append(sample.nanoseconds) } else { idle.append(sample.nanoseconds) }
        }
        let durations = windows.map { Double($0.1 - $0.0) / 1e6 }.sorted()
        return (LatencyStats(samples: idle), LatencyStats(samples: busy), durations[durations.count / 2])
    }

    /// Asks the kernel to drop the clean cached pages of `path` (and its WAL).
    static func dropPageCache(_ path: String) {
        for file in [path, path + "-wal"] {
            let descriptor = open(file, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
            close(descriptor)
        }
    }
}
