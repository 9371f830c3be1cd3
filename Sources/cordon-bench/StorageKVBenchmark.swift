import ArgumentParser
import CCordonBench
import CordonAppStorage
import CordonBenchSummary
import CordonSecrets
import Dispatch
import Foundation
import GRDB

/// `cordon-bench storage --kv`: the encrypted key-value store against its baselines, in one run.
///
/// kv: AppStorage (what SecureStore runs once it holds the key: an HMAC lookup, a SQLite read, an
/// AES-GCM open) against a plain GRDB read of the same row without encryption, on a file with the
/// same settings (WAL, synchronous FULL). socket: io.cordon.Storage.Get of the same 1 KiB value by
/// a registered app against GetStatus on the same connection. Each pair is timed alternately, the
/// store's pairs in `kvRuns` runs (median of the runs' medians, each run's ratio). Targets: get
/// <= 1.5x, put <= 2x the plain operation (`--summary` appends them; the socket's round trip
/// against the echo is `cordon-bench rtt`'s target).
struct StorageKVBenchmark: ParsableArguments {
    @Flag(help: "Measure the encrypted key-value store (get, put, io.cordon.Storage.Get).")
    var kv = false
    @Option(help: "Operations measured per side.")
    var iterations = 20000
    @Option(help: "Size of the value, bytes.")
    var valueBytes = 1024
    @Option(help: "Runs of the store's get and put comparisons (the spread is across runs).")
    var kvRuns = 5

    /// The targets: the sealed operation's median over the plain one's.
    static let getTarget = 1.5
    static let putTarget = 2.0

    func run(summary: SummaryOption) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-kv-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let value = [UInt8](repeating: 0x5A, count: valueBytes)
        let key = SecureBytes(copying: [UInt8](repeating: 7, count: 32))
        let storage = AppStorage(path: directory + "/sealed.sqlite", appId: "com.example.bench", appKey: key)
        let plain = try StorageKVPlain(path: directory + "/plain.sqlite")
        for index in 0..<100 {
            try storage.put(namespace: "default", name: "record-\(index)", value: value)
            try plain.put(name: "record-\(index)", value: value)
        }
        let (getSealed, getPlain) = Comparison.runs(kvRuns) {
            Self.interleaved(
                iterations,
                { index in
                    _ = try? storage.withValue(namespace: "default", name: "record-\(index % 100)") { Data($0) }
                },
                { index in _ = try? plain.get(name: "record-\(index % 100)") })
        }
        let (putSealed, putPlain) = Comparison.runs(kvRuns) {
            Self.interleaved(
                max(iterations / 10, 100),
                { index in try? storage.put(namespace: "default", name: "record-\(index % 100)", value: value) },
                { index in try? plain.put(name: "record-\(index % 100)", value: value) })
        }
        print("kv, \(valueBytes)-byte values (median µs of \(max(kvRuns, 1)) runs, median p99 µs):")
        Self.row("get sealed", getSealed, against: getPlain, target: Self.getTarget)
        Self.row("get plain GRDB", getPlain)
        Self.row("put sealed", putSealed, against: putPlain, target: Self.putTarget)
        Self.row("put plain GRDB", putPlain)
        try summary.append([
            Self.record("get (HMAC lookup, SQLite read, AES-GCM open)", getSealed, getPlain, Self.getTarget),
            Self.record("put (one transaction, synchronous FULL)", putSealed, putPlain, Self.putTarget),
        ])
        try StorageKVSocket(directory: directory + "/agent", value: value, iterations: iterations).run()
    }

    /// A target: each run's median sealed / plain.
    static func record(_ subject: String, _ sealed: Comparison.Side, _ plain: Comparison.Side, _ target: Double)
        -> SummaryRecord
    {
        SummaryRecord(
            benchmark: "storage --kv", subject: subject, comparison: .atMost, targetValue: target, unit: "×",
            baseline: "plain GRDB, same row unencrypted",
            values: zip(sealed.runs, plain.runs).map { $0.medianMicroseconds / max($1.medianMicroseconds, 0.001) })
    }

    /// Times `sealed` and `plain` alternately, one operation each in turn, so that whatever else
    /// the machine does falls on both sides alike.
    static func interleaved(_ count: Int, _ sealed: (Int) -> Void, _ plain: (Int) -> Void) -> (
        LatencyStats, LatencyStats
    ) {
        for index in 0..<min(count, 1000) {
            sealed(index)
            plain(index)
        }
        var samples: ([UInt64], [UInt64]) = ([], [])
        samples.0.reserveCapacity(count)
        samples.1.reserveCapacity(count)
        for index in 0..<count {
            var start = DispatchTime.now().uptimeNanoseconds
            sealed(index)
            samples.0.append(DispatchTime.now().uptimeNanoseconds - start)
            start = DispatchTime.now().uptimeNanoseconds
            plain(index)
            samples.1.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return (LatencyStats(samples: samples.0), LatencyStats(samples: samples.1))
    }

    static func row(_ name: String, _ stats: LatencyStats, against baseline: LatencyStats? = nil, target: Double? = nil)
    {
        var line =
            name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + String(format: "%8.2f %8.2f", stats.medianMicroseconds, stats.p99Microseconds)
        if let baseline, let target {
            let ratio = stats.medianMicroseconds / max(baseline.medianMicroseconds, 0.001)
            line += String(format: "   %.2fx the plain one (target <= %.1fx)", ratio, target)
        }
        print(line)
    }

    /// A row over runs: the median of the runs' medians and p99s, and against `baseline` the
    /// ratio of the medians with each run's.
    static func row(
        _ name: String, _ side: Comparison.Side, against baseline: Comparison.Side? = nil, target: Double? = nil
    ) {
        var line =
            name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + String(format: "%8.2f %8.2f", side.median, side.p99)
        if let baseline, let target {
            let runs = zip(side.runs, baseline.runs).map {
                String(format: "%.2f", $0.medianMicroseconds / max($1.medianMicroseconds, 0.001))
            }
            line += String(
                format: "   %.2fx the plain one (target <= %.1fx; runs: %@)", side.median / max(baseline.median, 0.001),
                target, runs.joined(separator: " "))
        }
        print(line)
    }
}

/// The baseline: the same table shape, the value stored as it is.
final class StorageKVPlain {
    let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE records (name TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID")
        }
    }

    func put(name: String, value: [UInt8]) throws {
        try queue.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO records (name, value) VALUES (?, ?)", arguments: [name, Data(value)])
        }
    }

    /// Read the way `AppStorage` reads: one cached statement outside a transaction (its own read
    /// transaction), so the ratio is the sealing's cost and not GRDB's `read` wrapper's.
    func get(name: String) throws -> Data? {
        try queue.inDatabase { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT value FROM records WHERE name = ?"), arguments: [name])
        }
    }
}

/// `io.cordon.Storage.Get` over the socket by a registered app, against `GetStatus`.
struct StorageKVSocket {
    let directory: String
    let value: [UInt8]
    let iterations: Int

    func run() throws {
        let agent = try BenchAgent(directory: directory)
        defer { agent.stop() }
        let app = try VarlinkConnection(path: agent.socket)
        try app.call("io.cordon.App.Register", ["appId": "com.example.bench"])
        try app.call(
            "io.cordon.Storage.Put", ["name": "record", "value": Data(value).base64EncodedString()])
        let get = try VarlinkConnection.encode(
            method: "io.cordon.Storage.Get", parameters: ["name": "record"], more: false)
        let status = try VarlinkConnection.encode(method: "io.cordon.Agent.GetStatus", parameters: [:], more: false)
        let roundTrip = { (message: String) in
            { (_: Int) in
                try? app.send(message)
                _ = try? app.receive()
            }
        }
        try app.send(get)
        let replyLength = try app.receive().utf8.count
        // The round-trip baseline of `cordon-bench rtt`: a separate C process, replies of Get's size.
        let echoPath = directory + "/echo.sock"
        let echoPid = ccb_echo_spawn(echoPath, replyLength, -1)
        guard echoPid > 0 else { throw BenchError.system("starting the echo process", -echoPid) }
        defer { ccb_echo_stop(echoPid) }
        let echo = try RawUnixSocket.connect(to: echoPath)
        let request = Array(get.utf8) + [0]
        let (storageGet, getStatus) = StorageKVBenchmark.interleaved(iterations, roundTrip(get), roundTrip(status))
        let (againstEcho, echoStats) = StorageKVBenchmark.interleaved(
            iterations, roundTrip(get),
            { _ in
                try? echo.send(request)
                _ = try? echo.receiveMessage()
            })
        print("socket (median µs, p99 µs):")
        StorageKVBenchmark.row("Storage.Get", storageGet)
        StorageKVBenchmark.row("GetStatus", getStatus)
        StorageKVBenchmark.row("Storage.Get", againstEcho)
        StorageKVBenchmark.row("C echo", echoStats)
        print(
            String(
                format: "Storage.Get is %.2fx GetStatus's round trip and %.2fx the separate-process echo's",
                storageGet.medianMicroseconds / max(getStatus.medianMicroseconds, 0.001),
                againstEcho.medianMicroseconds / max(echoStats.medianMicroseconds, 0.001)))
    }
}
