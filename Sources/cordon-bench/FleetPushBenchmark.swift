import ArgumentParser
import CNATS
import CordonBenchSummary
import CordonFleet
import CordonFleetAdmin
import CordonFleetd
import CordonNATS
import CordonNATSLoop
import Crypto
import Foundation
import Logging

/// `cordon-bench fleet`: the push channel at fleet scale (docs/PERFORMANCE.md, "Fleet push"). K
/// simulated machines in this process, each the real push client on one epoll loop
/// (`SwarmMachine`), against a real nats-server and nginx started here: a signed command to each
/// (10% offline during the publish), nats-server restarted under the load, then signed reports at a
/// fleet's posture rate; latencies in HDR histograms, memory and CPU per machine and per server
/// connection.
struct FleetPushBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "A swarm of simulated machines on NATS: command latency, offline catch-up, restart, report ingest.")

    @Option(help: "Simulated machines.") var devices = 10_000
    @Option(help: "The share of machines offline while the command is published.") var offline = 0.10
    @Option(help: "Reports per second in the report phase (111/s: 100,000 machines every 15 min).")
    var reportRate = 111.0
    @Option(help: "Minutes of the report phase.") var reportMinutes = 10.0
    @Option(help: "Threads delivering messages to the machines (the C client's shared pool).")
    var deliveryThreads: Int32 = 2
    /// Each machine of a fleet blocks only itself while the stream acknowledges its report (a few
    /// to tens of milliseconds under load). With 64 threads, 9,000 such waits queued behind each
    /// other: command p99 3.0 s; with 256, 2.3 s; with 1,024, 1.3 s (docs/PERFORMANCE.md, "Fleet
    /// push").
    @Option(help: "Threads for the machines' blocking work (acknowledged publishes, catch-up reads).")
    var workers = 1024
    @Flag(help: "Skip the nats-server restart.") var noRestart = false
    @OptionGroup var summary: SummaryOption

    func run() async throws {
        guard devices > 0, offline >= 0, offline < 1, reportRate > 0, reportMinutes >= 0 else {
            throw ValidationError("--devices > 0, 0 <= --offline < 1, --report-rate > 0, --report-minutes >= 0")
        }
        try Self.raiseOpenFiles(to: devices + 1024)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-fleet-swarm-\(getpid())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let quiet = Logger(label: "swarm") { _ in SwiftLogNoOpLogHandler() }
        let log = SwarmLog()

        // The repository (`cordon fleet`) on nginx; the machines trust what one verified refresh gives.
        let repository = try FleetBenchRepository(directory: work)
        let nginx = try FleetBenchNginx(serving: repository.served, directory: work)
        defer { nginx.stop() }
        try await nginx.ready()
        let client = RepositoryClient(base: nginx.base, caFile: nginx.caFile, connections: 1)
        let (outcome, _) = await RepositoryPoll(client: client).refresh(
            try TUFTrustedSet(root: repository.root), etag: nil, now: Date())
        await client.shutdown()
        guard case .updated(let trusted) = outcome else { throw ValidationError("the first refresh failed") }
        let commandKeys = try Self.commandKeys(workspace: repository.directory + "/fleet")

        print("fleet: making \(devices) machine keys")
        let machines = (0..<devices).map { SwarmMachine(index: $0) }
        let admin = Curve25519.Signing.PrivateKey()
        let server = try FleetBenchNATS(
            directory: work, admin: NATSNKey.user(publicKey: Array(admin.publicKey.rawRepresentation)),
            machines: machines.map { ($0.id, $0.nkey) })
        defer { server.stop() }
        var adminOptions = NATSOptions(servers: [server.url], name: "cordon-bench admin")
        adminOptions.nkey = NATSNKey.user(publicKey: Array(admin.publicKey.rawRepresentation))
        adminOptions.signer = { (try? admin.signature(for: $0)).map(Array.init) ?? [] }
        adminOptions.retryFirstConnect = true
        let adminConnection = try NATSConnection(adminOptions) { event in
            if case .error = event { print("admin: \(event)") }
            if case .closed = event { print("admin: \(event)") }
        }
        defer { adminConnection.close() }
        try FleetRing.makeStreams(on: adminConnection)
        let ingest = FleetSwarmIngest()
        try ingest.listen(on: adminConnection)
        try adminConnection.flush()

        // Connect every machine on one loop.
        _ = nats_SetMessageDeliveryPoolSize(deliveryThreads)
        guard let loop = NATSEpollLoop() else {
            throw ValidationError("the epoll event loop did not start (epoll set, eventfd or thread refused)")
        }
        let work1 = SwarmWorkers(threads: workers)
        defer { work1.stop(count: workers) }
        let events = SwarmEvents(count: devices)
        let push = FleetdConfiguration.Push(servers: [server.url], caFile: nil)
        let selfBefore = FleetBenchProcess.residentBytes()
        let serverBefore = server.residentBytes()
        let connecting = Date()
        for machine in machines {
            try machine.connect(
                push, loop: loop, trusted: trusted, work: work1, logger: log.logger(for: machine.index)
            ) { event in
                events.record(machine.index, event)
            }
        }
        guard await events.wait(timeout: 120, { $0.connected == devices }) else {
            throw ValidationError("only \(events.snapshot.connected) of \(devices) machines connected in 120 s")
        }
        let connectSeconds = Date().timeIntervalSince(connecting)
        try await Task.sleep(for: .seconds(2))
        let selfPerMachine = Double(FleetBenchProcess.residentBytes() - selfBefore) / Double(devices)
        let serverPerConnection = Double(server.residentBytes() - serverBefore) / Double(devices)
        let idle = try await Self.cpu(server: server, seconds: 10)
        print(
            String(
                format:
                    "connected: %d machines in %.1f s; memory %.1f KiB per machine here, %.1f KiB per connection in nats-server; idle CPU %.2f%% of a core here, %.2f%% nats-server",
                devices, connectSeconds, selfPerMachine / 1024, serverPerConnection / 1024, idle.here * 100,
                idle.server * 100))

        // Phase 1: one signed command to each; a share of the machines offline meanwhile.
        let offlineSet: Set<Int> =
            offline > 0 ? Set(stride(from: 0, to: devices, by: max(1, Int((1 / offline).rounded())))) : []
        for index in offlineSet { machines[index].disconnect() }
        let files = try machines.map { machine in
            try Self.commandFile(counter: 1, for: machine.id, keys: commandKeys)
        }
        var published: [String: Date] = [:]
        let start1 = ingest.count
        let publishCPU = (ProcessCPU.nanoseconds(pid: getpid()), server.cpuNanoseconds())
        for (index, machine) in machines.enumerated() {
            published[machine.id] = Date()
            try adminConnection.publish(FleetPushedCommands.subject(for: machine.id), files[index])
        }
        try adminConnection.flush()
        let online = devices - offlineSet.count
        _ = await ingest.wait(from: start1, timeout: 60) { arrivals in
            Set(arrivals.filter { $0.report?.lastCommand == 1 }.map(\.device)).count >= online
        }
        let commandLatency = Self.latencies(ingest.arrivals(from: start1), command: 1, since: published)
        let phase1CPU = (
            ProcessCPU.used(publishCPU.0, ProcessCPU.nanoseconds(pid: getpid())),
            ProcessCPU.used(publishCPU.1, server.cpuNanoseconds())
        )
        print("command to \(online) online machines: \(commandLatency.line)")
        print(
            String(
                format: "  CPU for the whole phase: %.2f s here (%.0f us per machine), %.2f s nats-server",
                Double(phase1CPU.0) / 1e9, Double(phase1CPU.0) / 1e3 / Double(max(online, 1)),
                Double(phase1CPU.1) / 1e9))

        // The offline machines come back: each must be served within 5 s of reconnecting.
        var reconnectLatency = SwarmLatencies()
        if !offlineSet.isEmpty {
            var back: [String: Date] = [:]
            let start2 = ingest.count
            for index in offlineSet.sorted() {
                back[machines[index].id] = Date()
                try machines[index].connect(
                    push, loop: loop, trusted: trusted, work: work1, logger: log.logger(for: index)
                ) { event in
                    events.record(index, event)
                }
            }
            let ids = Set(offlineSet.map { machines[$0].id })
            _ = await ingest.wait(from: start2, timeout: 60) { arrivals in
                Set(arrivals.filter { ids.contains($0.device) && $0.report?.lastCommand == 1 }.map(\.device)).count
                    >= ids.count
            }
            var served = Set<String>()
            for arrival in ingest.arrivals(from: start2)
            where ids.contains(arrival.device) && arrival.report?.lastCommand == 1 {
                guard served.insert(arrival.device).inserted, let at = back[arrival.device] else { continue }
                reconnectLatency.record(seconds: arrival.at.timeIntervalSince(at))
            }
            print("the \(ids.count) offline machines, from reconnecting: \(reconnectLatency.line)")
            Self.explain(
                offlineSet.sorted().map { machines[$0] }.filter { !served.contains($0.id) }, command: 1, log: log,
                events: events
            ) { Self.kept(for: $0, admin: adminConnection, expected: files, command: 1) }
        }
        let executedOnce1 = machines.filter { $0.executions[1] == 1 }.count
        let twice1 = machines.filter { ($0.executions[1] ?? 0) > 1 }.count

        // Phase 2: nats-server restarted under the load; then command 2 to every machine.
        var restart: (seconds99: Double, peakOverMean: Double, reconnected: Int)?
        var executedOnce2 = devices
        var twice2 = 0
        if !noRestart {
            events.resetReconnects()
            server.stop()
            let down = Date()
            try server.start()
            let up = Date()
            let target99 = Int((Double(devices) * 0.99).rounded(.up))
            _ = await events.wait(timeout: 180) { $0.reconnects.count >= devices }
            let times = events.snapshot.reconnects.values.map { $0.timeIntervalSince(up) }.sorted()
            let seconds99 = times.count >= target99 ? times[target99 - 1] : .infinity
            var bins: [Int: Int] = [:]
            for time in times { bins[Int(max(time, 0)), default: 0] += 1 }
            let span = max(1, Int((times.last ?? 0).rounded(.up)))
            let mean = Double(times.count) / Double(span)
            let peak = Double(bins.values.max() ?? 0)
            restart = (seconds99, mean > 0 ? peak / mean : .infinity, times.count)
            print(
                String(
                    format:
                        "restart: down %.2f s; %d of %d reconnected, 99%% within %.1f s of the server's return; peak %.0f/s, mean %.0f/s over %d s (%.1fx)",
                    up.timeIntervalSince(down), times.count, devices, seconds99, peak, mean, span,
                    mean > 0 ? peak / mean : 0))
            let last = events.snapshot.reconnects.sorted { $0.value > $1.value }.prefix(3).map {
                String(format: "%.1f s: %@", $0.value.timeIntervalSince(up), events.trail(of: $0.key))
            }
            print("  the last to reconnect, after the server's return: \(last.joined(separator: "; "))")
            // The admin publishes once the server answers it again (its JetStream back).
            for _ in 0..<300 {
                if (try? adminConnection.subjects(stream: FleetPushedCommands.stream, timeout: 1)) != nil { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let files2 = try machines.map { try Self.commandFile(counter: 2, for: $0.id, keys: commandKeys) }
            let start3 = ingest.count
            var published2: [String: Date] = [:]
            for (index, machine) in machines.enumerated() {
                published2[machine.id] = Date()
                try adminConnection.publish(FleetPushedCommands.subject(for: machine.id), files2[index])
            }
            try adminConnection.flush()
            _ = await ingest.wait(from: start3, timeout: 60) { arrivals in
                Set(arrivals.filter { $0.report?.lastCommand == 2 }.map(\.device)).count >= devices
            }
            let after = Self.latencies(ingest.arrivals(from: start3), command: 2, since: published2)
            print("command 2 after the restart: \(after.line)")
            executedOnce2 = machines.filter { $0.executions[2] == 1 }.count
            Self.explain(
                machines.filter { $0.executions[2] == nil }, command: 2, log: log, events: events
            ) { Self.kept(for: $0, admin: adminConnection, expected: files2, command: 2) }
            twice2 = machines.filter { ($0.executions[2] ?? 0) > 1 || ($0.executions[1] ?? 0) > 1 }.count
        }
        print(
            "executed exactly once: command 1 \(executedOnce1)/\(devices) (twice: \(twice1)); command 2 \(executedOnce2)/\(devices) (twice or 1 again: \(twice2)); invalid reports \(ingest.invalid)"
        )

        // Phase 3: signed reports at the fleet's posture rate.
        var ingestLag = SwarmLatencies()
        var periodsExact = true
        var reportCPU = (here: 0.0, server: 0.0)
        if reportMinutes > 0 {
            let period = Double(devices) / reportRate
            let duration = reportMinutes * 60
            let phases = machines.map { _ in Double.random(in: 0..<period) }
            var schedule: [(at: Double, machine: Int)] = []
            var k = 0.0
            while k * period < duration {
                for (index, phase) in phases.enumerated() where k * period + phase < duration {
                    schedule.append((k * period + phase, index))
                }
                k += 1
            }
            schedule.sort { $0.at < $1.at }
            let start4 = ingest.count
            let begin = Date().addingTimeInterval(1)
            let cpuBefore = (ProcessCPU.nanoseconds(pid: getpid()), server.cpuNanoseconds())
            print(
                String(
                    format: "reports: %.0f/s for %.0f s (each machine every %.0f s): %d reports", reportRate, duration,
                    period, schedule.count))
            for item in schedule {
                let due = begin.addingTimeInterval(item.at)
                let wait = due.timeIntervalSinceNow
                if wait > 0.002 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                let machine = machines[item.machine]
                work1.run { machine.publishPeriodic(trusted: trusted, time: due, logger: quiet) }
            }
            _ = await ingest.wait(from: start4, timeout: 30) { $0.count >= schedule.count }
            let seconds = Date().timeIntervalSince(begin)
            reportCPU = (
                Double(ProcessCPU.used(cpuBefore.0, ProcessCPU.nanoseconds(pid: getpid()))) / 1e9 / seconds,
                Double(ProcessCPU.used(cpuBefore.1, server.cpuNanoseconds())) / 1e9 / seconds
            )
            // A report's time has whole seconds: each machine's j-th arrival answers its j-th due time
            // (a machine reports once a period, so its reports cannot overtake each other).
            var dues: [Int: [Date]] = [:]
            for item in schedule { dues[item.machine, default: []].append(begin.addingTimeInterval(item.at)) }
            var byDevice: [String: [FleetSwarmIngest.Arrival]] = [:]
            for arrival in ingest.arrivals(from: start4) { byDevice[arrival.device, default: []].append(arrival) }
            var received = 0
            for machine in machines {
                let expected = dues[machine.index] ?? []
                let arrivals = byDevice[machine.id] ?? []
                received += arrivals.count
                if arrivals.count != expected.count { periodsExact = false }
                for (arrival, due) in zip(arrivals, expected) {
                    guard let report = arrival.report, abs(report.time.timeIntervalSince(due)) < 1.001 else {
                        periodsExact = false
                        continue
                    }
                    ingestLag.record(seconds: arrival.at.timeIntervalSince(due))
                }
            }
            print("report ingest lag: \(ingestLag.line)")
            print(
                String(
                    format:
                        "  exactly one report per machine per period: %@ (%d expected, %d received); CPU %.1f%% here, %.1f%% nats-server",
                    periodsExact ? "yes" : "no", schedule.count, received, reportCPU.here * 100,
                    reportCPU.server * 100))
        }
        let kept = (try? adminConnection.subjects(stream: FleetPushedCommands.reportStream).count) ?? 0
        print("the reports stream keeps the last report of \(kept) machines")

        for machine in machines { machine.disconnect() }
        loop.stop()

        var records = [
            SummaryRecord(
                benchmark: "fleet", subject: "\(devices) machines: command verified, executed, acknowledged, p99",
                comparison: .atMost, targetValue: 2, unit: "s", baseline: nil, values: [commandLatency.seconds(99)],
                note: String(format: "max %.2f s (target all within 5 s)", commandLatency.max)),
            SummaryRecord(
                benchmark: "fleet", subject: "\(devices) machines: command, slowest", comparison: .atMost,
                targetValue: 5, unit: "s", baseline: nil, values: [commandLatency.max]),
            SummaryRecord(
                benchmark: "fleet", subject: "offline machines served after reconnecting, slowest",
                comparison: .atMost, targetValue: 5, unit: "s", baseline: nil, values: [reconnectLatency.max],
                note: "\(offlineSet.count) machines"),
            SummaryRecord(
                benchmark: "fleet", subject: "commands lost or executed twice", comparison: .atMost, targetValue: 0,
                unit: "commands", baseline: nil,
                values: [Double((devices - executedOnce1) + twice1 + (devices - executedOnce2) + twice2)]),
        ]
        if let restart {
            records.append(
                SummaryRecord(
                    benchmark: "fleet", subject: "nats-server restart: 99% reconnected", comparison: .atMost,
                    targetValue: 120, unit: "s", baseline: nil, values: [restart.seconds99]))
            records.append(
                SummaryRecord(
                    benchmark: "fleet", subject: "nats-server restart: peak reconnect rate over the mean",
                    comparison: .atMost, targetValue: 5, unit: "x", baseline: nil, values: [restart.peakOverMean]))
        }
        if reportMinutes > 0 {
            records.append(
                SummaryRecord(
                    benchmark: "fleet", subject: "report ingest lag at \(Int(reportRate))/s, p99", comparison: .atMost,
                    targetValue: 1, unit: "s", baseline: nil, values: [ingestLag.seconds(99)],
                    note: periodsExact ? "one report per machine per period" : "NOT one report per machine per period"))
        }
        try summary.append(records)
    }

    /// Why machines missed `command`: what they warned about (the commonest first), refusals, how
    /// many connection events they had, and for the first three what the stream keeps for them
    /// (`kept`).
    static func explain(
        _ missed: [SwarmMachine], command: Int, log: SwarmLog, events: SwarmEvents,
        kept: (SwarmMachine) -> String
    ) {
        guard !missed.isEmpty else { return }
        var reasons: [String: Int] = [:]
        for machine in missed {
            let warnings = log.warnings(of: machine.index)
            let key =
                warnings.isEmpty
                ? "no warning"
                : warnings.map { $0.replacingOccurrences(of: machine.id, with: "<id>") }.joined(separator: " | ")
            reasons[String(key.prefix(300)), default: 0] += 1
        }
        let refused = missed.map { $0.state.withLock { $0.refused } }.reduce(0, +)
        var trails: [String: Int] = [:]
        for machine in missed { trails[events.trail(of: machine.index), default: 0] += 1 }
        let commonest = trails.sorted { $0.value > $1.value }.prefix(4).map { "\($0.key) ×\($0.value)" }
        print(
            "  \(missed.count) machines missed command \(command): \(refused) refusals; connection events (C connected, D disconnected, R reconnected, X closed, E error): \(commonest.joined(separator: ", "))"
        )
        for (reason, count) in reasons.sorted(by: { $0.value > $1.value }).prefix(5) {
            print("    \(count)× \(reason)")
        }
        for machine in missed.prefix(3) {
            print("    the stream keeps for \(machine.id.prefix(12)): \(kept(machine))")
        }
    }

    /// What the commands stream keeps for `machine`, read by the admin: the file published with
    /// `command` (`expected`, by machine index), another file, or nothing.
    static func kept(for machine: SwarmMachine, admin: NATSConnection, expected: [[UInt8]], command: Int) -> String {
        let kept = try? admin.lastMessage(
            stream: FleetPushedCommands.stream, subject: FleetPushedCommands.subject(for: machine.id))
        return kept.map { $0.data == expected[machine.index] ? "command \(command)'s file" : "another file" }
            ?? "nothing"
    }

    /// Each machine's first report naming `command`, from the time in `since` for its device.
    static func latencies(_ arrivals: [FleetSwarmIngest.Arrival], command: Int, since: [String: Date])
        -> SwarmLatencies
    {
        var latencies = SwarmLatencies()
        var seen = Set<String>()
        for arrival in arrivals where arrival.report?.lastCommand == command {
            guard seen.insert(arrival.device).inserted, let at = since[arrival.device] else { continue }
            latencies.record(seconds: arrival.at.timeIntervalSince(at))
        }
        return latencies
    }

    /// The workspace's command keys.
    static func commandKeys(workspace: String) throws -> [TUFSigningKey] {
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace + "/keys")
        return try names.filter { $0.hasPrefix("commands-") && $0.hasSuffix(".key") }.sorted().map {
            try FleetKeyFile.read(workspace + "/keys/" + $0).key
        }
    }

    /// Machine `device`'s pushed command file with command `counter` (a lock), signed by `keys`.
    static func commandFile(counter: Int, for device: String, keys: [TUFSigningKey]) throws -> [UInt8] {
        let now = Date()
        let commands = (1...counter).map {
            FleetCommand(
                counter: $0, kind: .lock, app: nil, issued: now, expires: now + 86_400,
                reason: "swarm")
        }
        return try FleetPushedCommands.sign(FleetCommandFile(device: device, commands: commands), with: keys)
    }

    /// CPU used by this process and the server over `seconds`, as shares of one core.
    static func cpu(server: FleetBenchNATS, seconds: Double) async throws -> (here: Double, server: Double) {
        let before = (ProcessCPU.nanoseconds(pid: getpid()), server.cpuNanoseconds())
        try await Task.sleep(for: .seconds(seconds))
        return (
            Double(ProcessCPU.used(before.0, ProcessCPU.nanoseconds(pid: getpid()))) / 1e9 / seconds,
            Double(ProcessCPU.used(before.1, server.cpuNanoseconds())) / 1e9 / seconds
        )
    }

    /// Raises this process's open-file limit (root may raise the hard limit too).
    static func raiseOpenFiles(to wanted: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = rlim_t(wanted)
        limit.rlim_max = max(limit.rlim_max, rlim_t(wanted))
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw ValidationError("cannot raise the open-file limit to \(wanted) (ulimit -n): run as root or raise it")
        }
    }
}
