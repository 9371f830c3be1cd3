import ArgumentParser
import CordonBenchSummary
import CordonSystem
import Dispatch
import Foundation

/// `cordon-bench rtt`: calls over the agent's socket against a separate-process echo, per placement.
struct RTTBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtt",
        abstract: "Round trips over the agent's socket vs a separate-process echo of the same sizes.",
        discussion: """
            Both sides use the same blocking client, call by call in turn, blocked in read(2) for \
            each reply (--client-wait poll: in poll(2) first, as CordonKit's event loop and \
            sd-varlink wait); the echo is a forked C \
            process that answers with a message as long as the agent's reply, so the difference is \
            the agent's own cost per call. After each run the floor, a C process making only the \
            system calls the agent must make per call (epoll_wait, recvmsg with SO_PASSCRED, for a \
            registered app's data call fstatat of the client's /proc/PID/stat and poll of its pidfd, \
            send), is measured against the echo the same way (floor ratio: what those calls cost). \
            Each placement (one-cpu: everything on CPU 0; split: the client on CPU 0, agent and \
            echo on CPU 1; unpinned) is measured --runs times for each \
            method: GetStatus, Check (pasteboard.paste), Storage.Get (a 1 KiB record the app stored), \
            Tokens.Code (a TOTP the app may read) and Identity.GetToken (a token the agent holds for \
            a signed-in session at the local identity provider, Tests/CordonIdentityTests/peers; \
            skipped with the reason when python3, authlib or Flask is missing). Each method's \
            connection registers its own app first; then the benchmark makes itself non-dumpable, as \
            the agent demands of an app it hands data to, so it runs as an ordinary user. Without --socket a cordond next \
            to this binary is started on a temporary directory, initialized and unlocked; with \
            --socket only GetStatus and Check are measured. Targets, the median ratio agent / echo \
            (--summary appends them): GetStatus and Check <= 1.5x one-cpu and <= 1x split; Storage.Get \
            <= 3x and <= 1.3x; Tokens.Code and Identity.GetToken <= 2x and <= 1.2x; unpinned none. \
            Storage.Get is also measured, interleaved call by call, against real Secret Service \
            peers on private buses (docs/PERFORMANCE.md, "Secret Service peers"): gnome-keyring's \
            Item.GetSecret by path (target Storage.Get / it <= 0.3x) and a libsecret-style lookup \
            over an encrypted session (<= 0.1x), and KeePassXC's GetSecret by path for information; \
            --no-secret-service-peers skips them.
            """)

    @Option(help: "Round trips measured per side in each run.")
    var iterations = 10000
    @Option(help: "Runs per placement (the report gives their spread).")
    var runs = 5
    @Option(help: "A placement to measure (one-cpu, split, unpinned); repeat for several. Default: all.")
    var placement: [RoundTripPlacement] = []
    @Option(
        help: """
            A method to measure (GetStatus, Check, Storage.Get, Tokens.Code, Identity.GetToken; with or \
            without io.cordon.); repeat, or separate with commas. Default: all.
            """)
    var method: [String] = []
    @Option(help: "Round trips before measuring.")
    var warmup = 2000
    @Option(
        help: """
            How the client waits for each reply, on every side: read (blocked in read(2)) or poll \
            (poll(2), then read(2), as CordonKit's event loop, sd-varlink and sd-bus do).
            """)
    var clientWait = ClientWait.read
    @Option(help: "Use an already running agent at this socket.")
    var socket: String?
    @Option(help: "The identity test peers (identity_provider.py, authlib and Flask).")
    var identityPeers = "Tests/CordonIdentityTests/peers"
    @Flag(
        help: """
            Skip the Secret Service peers (gnome-keyring-daemon, KeePassXC) Storage.Get is also measured \
            against; skipped with the reason when gnome-keyring-daemon is not installed.
            """)
    var noSecretServicePeers = false
    @Option(help: "Calls per side in each run against the Secret Service peers (each call timed alone).")
    var peerIterations = 2000
    @Option(help: "The dbus-daemon of the Secret Service peers' private bus.")
    var dbusDaemon = "/usr/bin/dbus-daemon"
    @Option(help: "The gnome-keyring-daemon measured as a Secret Service peer.")
    var gnomeKeyringDaemon = "/usr/bin/gnome-keyring-daemon"
    @Option(help: "The KeePassXC measured as a Secret Service peer (headless; skipped when it cannot start).")
    var keepassxc = "/usr/bin/keepassxc"
    @Option(help: "The keepassxc-cli that makes KeePassXC's database.")
    var keepassxcCli = "/usr/bin/keepassxc-cli"
    @Flag(help: "Print JSON instead of a table (the Secret Service comparison follows as a second document).")
    var json = false
    @OptionGroup var summary: SummaryOption

    func validate() throws {
        _ = try RTTMethod.parse(method)
        guard runs > 0, iterations > 0, peerIterations > 0, warmup >= 0 else {
            throw ValidationError(
                "--runs, --iterations and --peer-iterations must be positive, --warmup not negative")
        }
    }

    func run() throws {
        let methods = try RTTMethod.parse(method)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture =
            try socket.map { RTTFixture(socket: $0) }
            ?? RTTFixture(directory: directory, methods: methods, identityPeers: identityPeers)
        defer { fixture.stop() }

        let placements = (placement.isEmpty ? RoundTripPlacement.allCases : placement).filter(\.isPossible)
        let comparison = RoundTripComparison(
            directory: directory, iterations: iterations, warmup: warmup, runs: runs, placements: placements,
            wait: clientWait)
        var reports: [RTTReport] = []
        var records: [SummaryRecord] = []
        // Every app registers while the benchmark is dumpable, then it hardens itself as CordonKit
        // does, so the data calls are answered to an ordinary user (RTTCall).
        var connections: [(RTTCall, RawUnixSocket)] = []
        for method in methods {
            guard let call = try fixture.call(method) else {
                let reason = fixture.skipped[method] ?? "not set up"
                FileHandle.standardError.write(Data("rtt: \(method.rawValue) skipped: \(reason)\n".utf8))
                records += RTTReport.skippedRecords(method: method.rawValue, placements: placements, reason: reason)
                continue
            }
            let agent = try RoundTripComparison.connect(
                name: method.rawValue, socketPath: fixture.socket, calls: call.register.map { [$0] } ?? [])
            connections.append((call, agent))
        }
        if connections.contains(where: { $0.0.register != nil }) { try ProcessHardening.disableDumping() }
        for (call, agent) in connections {
            let report = try comparison.run(
                name: call.method.rawValue, request: call.request, agent: agent, prelude: call.prelude,
                registered: call.register != nil)
            reports.append(report)
            records += report.summaryRecords
        }
        let peers = try secretServicePeers(
            fixture: fixture, storageGet: connections.first { $0.0.method == .storageGet },
            directory: directory + "/secret-service", placements: placements)
        records += peers.records
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(reports), as: UTF8.self))
            if let report = peers.report {
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            }
        } else {
            for report in reports { report.printTable() }
            peers.report?.printTable()
        }
        try summary.append(records)
    }

    /// Storage.Get against the Secret Service peers (`SecretServiceComparison`) on `storageGet`'s
    /// registered connection, when Storage.Get is measured on the benchmark's own agent and the
    /// peers are not turned off; a peer that cannot run is skipped with the reason printed.
    private func secretServicePeers(
        fixture: RTTFixture, storageGet: (RTTCall, RawUnixSocket)?, directory: String,
        placements: [RoundTripPlacement]
    ) throws -> (report: SecretServiceReport?, records: [SummaryRecord]) {
        let targets = SecretServicePeers.targets
        func skip(_ reason: String) -> (report: SecretServiceReport?, records: [SummaryRecord]) {
            FileHandle.standardError.write(Data("rtt: Secret Service peers skipped: \(reason)\n".utf8))
            return (nil, SecretServiceReport.skippedRecords(targets: targets, placements: placements, reason: reason))
        }
        guard let (call, agent) = storageGet else {
            // Not asked for (--method): nothing to compare; asked for but skipped: say why.
            return fixture.skipped[.storageGet].map(skip) ?? (nil, [])
        }
        if noSecretServicePeers { return skip("--no-secret-service-peers") }
        guard FileManager.default.isExecutableFile(atPath: gnomeKeyringDaemon) else {
            return skip("\(gnomeKeyringDaemon) not installed (apt-get install gnome-keyring)")
        }
        let peers = try SecretServicePeers(
            directory: directory, value: fixture.value, busExecutable: dbusDaemon, keyring: gnomeKeyringDaemon,
            keepassxc: keepassxc, keepassCLI: keepassxcCli)
        defer { peers.stop() }
        if let reason = peers.keepassSkipped {
            FileHandle.standardError.write(Data("rtt: KeePassXC peer skipped: \(reason)\n".utf8))
        }
        let comparison = SecretServiceComparison(
            iterations: peerIterations, warmup: min(warmup, peerIterations), runs: runs, placements: placements)
        let report = try comparison.run(
            request: call.request, prelude: call.prelude, agent: agent, sides: peers.sides)
        return (report, report.summaryRecords)
    }
}
