import ArgumentParser
import CordonBenchSummary
import CordonFleet
import CordonFleetAdmin
import CordonFleetd
import CordonLocking
import Foundation
import Synchronization

/// `cordon-bench fleet-poll`: many simulated machines, each running the real verifier and poll loop
/// (`RepositoryPoll`, `TUFRefresh`, `FleetPollSchedule`), against a real nginx serving a repository
/// made by `cordon fleet` over HTTPS; a new policy is published and the time until every machine has
/// verified and downloaded it is measured (docs/PERFORMANCE.md, "Fleet polling").
struct FleetPollBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-poll",
        abstract: "Simulated machines polling a TUF repository on nginx: time to see a new policy, nginx's CPU.")

    @Option(help: "Simulated machines.") var devices = 10_000
    @Option(help: "Seconds between polls (jittered ±50%).") var interval = 6.0
    @Option(help: "Seconds of steady polling measured before the publish.") var steady = 12.0
    @Option(help: "HTTP/1.1 connections the machines share.") var connections = 64
    @OptionGroup var summary: SummaryOption

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-fleet-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let repository = try FleetBenchRepository(directory: work)
        let nginx = try FleetBenchNginx(serving: repository.served, directory: work)
        defer { nginx.stop() }
        try await nginx.ready()
        let client = RepositoryClient(base: nginx.base, caFile: nginx.caFile, connections: connections)
        let swarm = FleetSwarm(count: devices, root: repository.root, interval: interval, client: client)
        print("fleet-poll: \(devices) machines, interval \(interval) s, nginx on \(nginx.base)")
        let memoryBefore = FleetBenchProcess.residentBytes()
        let started = Date()
        let warm = Task { await swarm.run() }
        try await swarm.waitUntil(timeout: interval * 3 + 60) { $0.warmed == devices }
        print(String(format: "fleet-poll: all machines verified v1 in %.1f s", Date().timeIntervalSince(started)))
        let memoryPerDevice = Double(FleetBenchProcess.residentBytes() - memoryBefore) / Double(devices)

        // Steady polling: every machine asks for the timestamp about every interval (304).
        let requestsBefore = swarm.requests
        let nginxBefore = nginx.cpuNanoseconds()
        let selfBefore = ProcessCPU.nanoseconds(pid: getpid())
        let steadyStart = Date()
        try await Task.sleep(for: .seconds(steady))
        let steadySeconds = Date().timeIntervalSince(steadyStart)
        let nginxSteady = Double(ProcessCPU.used(nginxBefore, nginx.cpuNanoseconds())) / 1e9 / steadySeconds
        let selfSteady =
            Double(ProcessCPU.used(selfBefore, ProcessCPU.nanoseconds(pid: getpid()))) / 1e9 / steadySeconds
        let rate = Double(swarm.requests - requestsBefore) / steadySeconds

        // The publish: every machine must verify the new targets and download the new file.
        let nginxPublish = nginx.cpuNanoseconds()
        let published = Date()
        let version = try repository.publishNewPolicy()
        swarm.expect(targetsVersion: version, from: published)
        let deadline = interval * 1.5 + 60
        try? await swarm.waitUntil(timeout: deadline) { $0.updated == devices }
        let updateSeconds = Date().timeIntervalSince(published)
        let nginxUpdate = Double(ProcessCPU.used(nginxPublish, nginx.cpuNanoseconds())) / 1e9 / updateSeconds
        swarm.stop()
        warm.cancel()
        await client.shutdown()

        let latencies = swarm.latencies.sorted()
        let seen = latencies.count
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .infinity : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        print(
            String(
                format: "steady: %.0f requests/s; nginx %.1f%% of one core; this process %.1f%%", rate,
                nginxSteady * 100, selfSteady * 100))
        print(
            String(
                format:
                    "new policy: %d of %d machines; p50 %.2f s, p90 %.2f s, p99 %.2f s, max %.2f s (target p99 <= %.1f s)",
                seen, devices, percentile(0.5), percentile(0.9), percentile(0.99), latencies.last ?? .infinity,
                interval + 5))
        print(
            String(
                format: "during the update: nginx %.1f%% of one core; failed polls %d", nginxUpdate * 100,
                swarm.failures))
        print(String(format: "memory: %.1f KiB per simulated machine", memoryPerDevice / 1024))
        try summary.append([
            SummaryRecord(
                benchmark: "fleet-poll", subject: "\(devices) machines see a new policy, p99", comparison: .atMost,
                targetValue: interval + 5, unit: "s", baseline: nil, values: [percentile(0.99)],
                note: String(
                    format: "interval %.0f s; %d of %d machines saw it; max %.2f s", interval, seen, devices,
                    latencies.last ?? .infinity)),
            SummaryRecord(
                benchmark: "fleet-poll", subject: "nginx CPU while \(devices) machines poll", comparison: .atMost,
                targetValue: 25, unit: "% of one core", baseline: nil, values: [nginxSteady * 100],
                note: String(format: "%.0f conditional requests/s", rate)),
        ])
        if seen < devices { throw ExitCode(1) }
    }
}

/// The simulated machines: one task each, sharing an HTTP client; counters under one lock.
final class FleetSwarm: Sendable {
    struct Counters {
        var warmed = 0
        var updated = 0
        var requests = 0
        var failures = 0
        var latencies: [Double] = []
        var expected: (version: Int, since: Date)?
        var stopped = false
    }

    let count: Int
    let root: [UInt8]
    let interval: Double
    let client: RepositoryClient
    let counters = Locked(Counters())

    init(count: Int, root: [UInt8], interval: Double, client: RepositoryClient) {
        self.count = count
        self.root = root
        self.interval = interval
        self.client = client
    }

    var requests: Int { counters.withLock { $0.requests } }
    var failures: Int { counters.withLock { $0.failures } }
    var latencies: [Double] { counters.withLock { $0.latencies } }

    func expect(targetsVersion: Int, from date: Date) { counters.withLock { $0.expected = (targetsVersion, date) } }
    func stop() { counters.withLock { $0.stopped = true } }

    func waitUntil(timeout: Double, _ condition: (Counters) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if counters.withLock({ condition($0) }) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the machines did not get there in \(Int(timeout)) s")
    }

    /// Runs every machine until `stop()`.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { await self.machine(index) }
            }
        }
    }

    private func machine(_ index: Int) async {
        guard var trusted = try? TUFTrustedSet(root: root) else { return }
        var generator = SystemRandomNumberGenerator()
        var schedule = FleetPollSchedule(interval: interval)
        var etag: String?
        var installed: [String: String] = [:]
        var warmed = false
        var updated = false
        let poll = RepositoryPoll(client: client)
        // Machines start spread over one interval, as a fleet that booted at different times.
        try? await Task.sleep(for: .milliseconds(Int(Double.random(in: 0..<interval, using: &generator) * 1000)))
        while !counters.withLock({ $0.stopped }) {
            let (outcome, tag) = await poll.refresh(trusted, etag: etag, now: Date())
            var delay: Double
            switch outcome {
            case .updated(let set), .unchanged(let set):
                trusted = set
                etag = tag ?? etag
                var complete = true
                for (path, file) in set.allTargets where path.hasPrefix("policies/") {
                    let hash = TUFHex.encode(file.hashes["sha256"] ?? [])
                    guard installed[path] != hash else { continue }
                    counters.withLock { $0.requests += 1 }
                    if case .success = await poll.download(file) { installed[path] = hash } else { complete = false }
                }
                delay = schedule.afterSuccess(unit: Double.random(in: 0..<1, using: &generator))
                let targets = set.targets["targets"]?.version ?? 0
                counters.withLock { counters in
                    counters.requests += 1
                    if complete, !warmed {
                        warmed = true
                        counters.warmed += 1
                    }
                    if complete, !updated, let expected = counters.expected, targets >= expected.version {
                        updated = true
                        counters.updated += 1
                        counters.latencies.append(Date().timeIntervalSince(expected.since))
                    }
                }
            case .refused:
                delay = schedule.afterFailure(unit: Double.random(in: 0..<1, using: &generator))
                counters.withLock {
                    $0.requests += 1
                    $0.failures += 1
                }
            }
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
        }
    }
}

/// The repository: a `cordon fleet` workspace with one policy file.
struct FleetBenchRepository {
    let directory: String
    var served: String { directory + "/fleet/repository" }
    var root: [UInt8] { (FileManager.default.contents(atPath: served + "/1.root.json")).map(Array.init) ?? [] }
    var policies: String { directory + "/policies" }

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#
            .write(toFile: policies + "/20-fleet.json", atomically: true, encoding: .utf8)
        var workspace = try FleetWorkspace.create(at: directory + "/fleet").workspace
        _ = try workspace.publish(policies: policies)
    }

    /// Publishes a changed policy; returns the new targets version.
    func publishNewPolicy() throws -> Int {
        try #"{"schema": "cordon.policy.v1", "pasteboard": {"maxChars": 7}}"#
            .write(toFile: policies + "/20-fleet.json", atomically: true, encoding: .utf8)
        var workspace = try FleetWorkspace(opening: directory + "/fleet")
        _ = try workspace.publish(policies: policies)
        return try FleetWorkspace(opening: directory + "/fleet").ledger.role(.targets).version
    }
}
