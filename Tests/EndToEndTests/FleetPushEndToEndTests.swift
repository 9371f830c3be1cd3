import ChannelTestPeers
import CordonFleet
import CordonNATS
import Crypto
import Foundation
import NATSTestServer
import Testing

/// The push channel end to end: a workspace made with `cordon fleet`, served by nginx, a real
/// nats-server with JetStream whose users are the workspace's push key, the machine's own key and a
/// rogue publisher (the server and its accounts are not trusted), and fleetd polling once an hour.
/// `cordon fleet ring` brings a new command to a running machine in about a second and to an
/// offline one as it connects; forged rings and forged command files are refused and audited.
@Suite(.serialized) struct FleetPushEndToEndTests {
    static let policy = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#

    /// The workspace, nginx, nats-server and fleetd (not started; one poll made, so it trusts the
    /// repository's delegations).
    final class Setup: @unchecked Sendable {
        let workspace: TemporaryDirectory
        let target: TemporaryDirectory
        let nginx: NginxServer
        let server: NATSServer
        let fleetd: FleetdProcess
        let device: String
        /// fleetd's metrics endpoint (docs/FLEET.md, "Metrics").
        let metrics: String
        let rogue = Curve25519.Signing.PrivateKey()
        var fleet: String { workspace.appending("fleet") }

        init() async throws {
            workspace = try TemporaryDirectory()
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.path)
            let fleet = workspace.appending("fleet")
            let policies = workspace.appending("policies")
            try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
            try FleetPushEndToEndTests.policy.write(
                toFile: policies + "/20-fleet.json", atomically: true, encoding: .utf8)
            for arguments in [["init", fleet], ["publish", fleet, "--policies", policies]] {
                let result = try await runCommand(Binaries.cordon, ["fleet"] + arguments)
                guard result.status == 0 else { throw EventuallyError(what: "\(arguments[0]): \(result.stderr)") }
            }
            let pushKey = try await runCommand(Binaries.cordon, ["fleet", "push-key", fleet])
            guard pushKey.status == 0 else { throw EventuallyError(what: "push-key: \(pushKey.stderr)") }
            let adminKey = pushKey.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            nginx = try NginxServer(serving: fleet + "/repository")
            try await nginx.ready()
            let shipped = workspace.appending("root.json")
            try FileManager.default.copyItem(atPath: fleet + "/repository/1.root.json", toPath: shipped)
            target = try TemporaryDirectory()
            let metricsPort = try TestPorts.free()
            metrics = "http://127.0.0.1:\(metricsPort)/metrics"
            fleetd = try FleetdProcess(
                shippedRoot: shipped, nginx: nginx, policyDirectory: target.path, interval: 3600,
                metricsPort: metricsPort)
            device = try await fleetd.deviceID()
            let machineKey = try await fleetd.nkey()
            let commands = FleetPushedCommands.subject(for: device)
            server = try NATSServer(users: [
                NATSServer.User(nkey: adminKey, publish: [">"], subscribe: ["_INBOX.>"]),
                NATSServer.User(
                    nkey: NATSNKey.user(publicKey: Array(rogue.publicKey.rawRepresentation)),
                    publish: [FleetDoorbell.subject, FleetPushedCommands.subjects, FleetPushedCommands.reportSubjects],
                    subscribe: ["_INBOX.rogue.>"]),
                NATSServer.User(
                    nkey: machineKey,
                    publish: [
                        "$JS.API.DIRECT.GET.\(FleetPushedCommands.stream).\(commands)",
                        FleetPushedCommands.reportSubject(for: device),
                    ],
                    subscribe: [FleetDoorbell.subject, commands, "_INBOX.\(device).>"]),
            ])
            try fleetd.addPush(servers: [server.url])
            let first = try await fleetd.pollOnce()
            guard first.status == 0 else { throw EventuallyError(what: "the first poll: \(first.stdout)") }
        }

        /// `cordon fleet` with `arguments` after the subcommand's name and the workspace.
        func admin(_ command: String, _ arguments: [String] = []) async throws -> CommandResult {
            try await runCommand(Binaries.cordon, ["fleet", command, fleet] + arguments)
        }

        /// `cordon fleet ring`.
        func ring() async throws -> CommandResult {
            try await admin("ring", ["--nats", server.url])
        }

        /// A connection as the rogue publisher.
        func rogueConnection() throws -> NATSConnection {
            var options = NATSOptions(servers: [server.url], name: "rogue")
            options.nkey = NATSNKey.user(publicKey: Array(rogue.publicKey.rawRepresentation))
            let rogue = self.rogue
            options.signer = { nonce in Array((try? rogue.signature(for: nonce)) ?? Data()) }
            return try NATSConnection(options)
        }

        /// What `stream` keeps on `subject`, read with the workspace's push key.
        func kept(_ stream: String, _ subject: String) throws -> [UInt8]? {
            var options = NATSOptions(servers: [server.url], name: "admin")
            let seed = try String(contentsOfFile: fleet + "/keys/push.nk", encoding: .utf8)
            guard options.identify(seed: seed) else { throw EventuallyError(what: "keys/push.nk is not a seed") }
            let connection = try NATSConnection(options)
            defer { connection.close() }
            return try connection.lastMessage(stream: stream, subject: subject)?.data
        }

        /// The machine's last report the reports stream keeps, verified.
        func keptReport() throws -> FleetReport? {
            try kept(FleetPushedCommands.reportStream, FleetPushedCommands.reportSubject(for: device)).map {
                try FleetReport.verify($0, device: device)
            }
        }

        /// The command file the commands stream keeps for `machine`.
        func keptCommands(for machine: String) throws -> [UInt8] {
            guard let bytes = try kept(FleetPushedCommands.stream, FleetPushedCommands.subject(for: machine)) else {
                throw EventuallyError(what: "the stream keeps no command file for \(machine)")
            }
            return bytes
        }

        func cleanUp() {
            fleetd.cleanUp()
            server.stop()
            nginx.stop()
            target.remove()
            workspace.remove()
        }
    }

    @Test func aRunningMachineTakesACommandAtOnceAndForgedRingsMakeNoPoll() async throws {
        let setup = try await Setup()
        defer { setup.cleanUp() }
        let fleetd = setup.fleetd
        try fleetd.start()
        try await eventually(timeout: 60, "fleetd connects") { fleetd.log.contains("push: connected") }

        // Forged (another key's signature), replayed (the timestamp the machine has) and garbage rings.
        let attacker = try setup.rogueConnection()
        defer { attacker.close() }
        let current = try Array(Data(contentsOf: URL(fileURLWithPath: setup.fleet + "/repository/timestamp.json")))
        var document = try #require(try JSONSerialization.jsonObject(with: Data(current)) as? [String: Any])
        var signed = try #require(document["signed"] as? [String: Any])
        signed["version"] = ((signed["version"] as? Int) ?? 1) + 100  // Newer, under the old signature.
        document["signed"] = signed
        let forged = Array(try JSONSerialization.data(withJSONObject: document))
        // Over the limit of a timestamp: dropped unread, counted (delivered before the others).
        let oversized = [UInt8](repeating: 0x20, count: TUFRefresh.Limits.timestamp + 1)
        try await eventually(timeout: 60, "forged rings are refused and audited") {
            for ring in [oversized, forged, current, Array("ding".utf8)] {
                try attacker.publish(FleetDoorbell.subject, ring)
            }
            try attacker.flush()
            let refused = fleetd.audit.filter { $0["event"] == "doorbell.refused" }.compactMap { $0["kind"] }
            return Set(refused).isSuperset(of: ["threshold", "malformed"])
        }
        #expect(!fleetd.log.contains("the doorbell rang"), "a forged or replayed ring made a poll: \(fleetd.log)")
        // Each refused ring is counted (the audit log has one record a minute per kind).
        let flooded = try await FleetdMetricsEndToEndTests.scrape(setup.metrics).stdout
        for reason in ["threshold", "malformed", "length"] {
            let series = #"cordon_fleetd_rings_total{outcome="refused",reason="\#(reason)"} "#
            #expect(flooded.contains(series) && !flooded.contains(series + "0\n"), "\(reason): \(flooded)")
        }
        #expect(flooded.contains(#"cordon_fleetd_rings_total{outcome="poll"} 0"#), "\(flooded)")

        // The admin's command, uploaded (nginx serves the workspace), then the ring: the command
        // comes on the machine's subject at once, without waiting for the doorbell's poll.
        let issued = try await setup.admin("command", ["--device", setup.device, "--lock"])
        #expect(issued.status == 0, "\(issued.stderr)")
        func polls() -> Int { fleetd.log.components(separatedBy: "repository verified").count - 1 }
        let pollsBefore = polls()
        let started = Date()
        let rang = try await setup.ring()
        #expect(rang.status == 0, "\(rang.stderr)")
        #expect(rang.stdout.contains("new commands for 1 machine(s)"), "\(rang.stdout)")
        try await eventually(timeout: 30, "the command is handed on") {
            fleetd.handedCommands == [FleetHandoff.commandFileName(1)]
        }
        print("push: a running machine handed the command on \(Date().timeIntervalSince(started)) s after the ring")
        try await eventually(timeout: 30, "fleetd says the push brought it") {
            fleetd.log.contains("push: commands handed on")
        }
        #expect(fleetd.audit.filter { $0["event"] == "command.accepted" && $0["kind"] == "lock" }.count == 1)
        // Its acknowledgement: the signed report the reports stream keeps names the command.
        try await eventually(timeout: 30, "the report names the command") { try setup.keptReport()?.lastCommand == 1 }
        // The doorbell's poll (within 10 s) then finds it taken: still handed on once.
        try await eventually(timeout: 30, "the doorbell's poll") { polls() > pollsBefore }
        #expect(fleetd.log.contains("the doorbell rang"))
        let rung = try await FleetdMetricsEndToEndTests.scrape(setup.metrics).stdout
        #expect(!rung.contains(#"cordon_fleetd_rings_total{outcome="poll"} 0"#), "\(rung)")
        #expect(rung.contains(#"cordon_fleetd_commands_total{outcome="handed_on"} 1"#), "\(rung)")
        #expect(fleetd.audit.filter { $0["event"] == "command.accepted" }.count == 1)
        #expect(fleetd.handedCommands == [FleetHandoff.commandFileName(1)])

        // The compliance view: the admin reads every kept report, each verified. The account keeps
        // a report it made for a machine id of its choosing: shown refused, never as that machine's.
        let fake = String(repeating: "f", count: 64)
        let forgedReport = FleetReport(
            device: fake, publicKey: Array(setup.rogue.publicKey.rawRepresentation), time: Date(), versions: [:],
            policies: [:], lastCommand: 9, lastError: nil)
        let signature = Array(try setup.rogue.signature(for: forgedReport.message))
        try attacker.publish(FleetPushedCommands.reportSubject(for: fake), forgedReport.file(signature: signature))
        try attacker.flush()
        try await eventually(timeout: 30, "the forged report is kept") {
            try await setup.admin("reports", ["--nats", setup.server.url]).stdout.contains("\(fake): refused")
        }
        let view = try await setup.admin("reports", ["--nats", setup.server.url])
        #expect(view.status == 1, "\(view.stdout)\(view.stderr)")
        #expect(view.stdout.contains("\(setup.device): valid"), "\(view.stdout)")
        #expect(view.stdout.contains("  last command: counter 1"), "\(view.stdout)")
        #expect(view.stdout.contains("2 machine(s), 1 refused"), "\(view.stdout)")
        #expect(view.stderr.contains("did not verify") && view.stderr.contains("hint:"), "\(view.stderr)")
        let one = try await setup.admin("reports", ["--nats", setup.server.url, "--device", setup.device])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("1 machine(s), 0 refused") && !one.stdout.contains(fake), "\(one.stdout)")
    }

    @Test func anOfflineMachineTakesWhatItMissedAsItConnectsAndAForgedFileIsRefused() async throws {
        let setup = try await Setup()
        defer { setup.cleanUp() }
        let fleetd = setup.fleetd
        let issued = try await setup.admin("command", ["--device", setup.device, "--wipe-app", "com.example.mail"])
        #expect(issued.status == 0, "\(issued.stderr)")
        let rang = try await setup.ring()
        #expect(rang.status == 0, "\(rang.stderr)")
        // The repository is out of reach: only what the stream kept can bring the command.
        setup.nginx.stop()

        let started = Date()
        try fleetd.start()
        try await eventually(timeout: 60, "what the stream kept is handed on") {
            fleetd.handedCommands == [FleetHandoff.commandFileName(1)]
        }
        print("push: an offline machine handed the command on \(Date().timeIntervalSince(started)) s after starting")
        // fleetd audits a command after its handed-on file is renamed into place and the directory
        // synced: under load the file is seen first.
        try await eventually(timeout: 30, "the command is audited as accepted") {
            fleetd.audit.contains { $0["event"] == "command.accepted" && $0["kind"] == "wipeApp" }
        }

        // A rogue publishes a wipe it signed itself on the machine's subject: refused, audited.
        let attacker = try setup.rogueConnection()
        defer { attacker.close() }
        let forgedKey = try TUFSigningKey(seed: Array(setup.rogue.rawRepresentation))
        let command = FleetCommand(
            counter: 2, kind: .wipe, app: nil, issued: Date(), expires: Date() + 3600,
            reason: "forged")
        let forged = try FleetPushedCommands.sign(
            FleetCommandFile(device: setup.device, commands: [command]), with: [forgedKey])
        // First a file over the limit: dropped unread, counted as a refused verification.
        let oversized = [UInt8](repeating: 0x20, count: FleetPushedCommands.maximumLength + 1)
        try attacker.publish(FleetPushedCommands.subject(for: setup.device), oversized)
        try attacker.publish(FleetPushedCommands.subject(for: setup.device), forged)
        try attacker.flush()
        try await eventually(timeout: 60, "the forged file is refused") {
            fleetd.audit.contains { $0["event"] == "push.refused" && $0["kind"] == "threshold" }
        }
        #expect(fleetd.handedCommands == [FleetHandoff.commandFileName(1)])
        #expect(!fleetd.audit.contains { $0["event"] == "command.accepted" && $0["kind"] == "wipe" })
        // Counted: the command the stream kept, handed on; the forged file, a refused verification.
        let text = try await FleetdMetricsEndToEndTests.scrape(setup.metrics).stdout
        #expect(text.contains(#"cordon_fleetd_commands_total{outcome="handed_on"} 1"#), "\(text)")
        #expect(!text.contains(#"cordon_fleetd_verifications_failed_total{reason="threshold"} 0"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_verifications_failed_total{reason="length"} 1"#), "\(text)")
        #expect(fleetd.log.contains("push: a command file of \(oversized.count) bytes is dropped unread"))
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="refused"} 2"#), "\(text)")
    }

    /// The NATS account is not trusted: what it can send on a machine's subject is genuine files
    /// sent again. An older one of this machine's (a replay) and another machine's are each refused
    /// and counted, nothing is executed, and the other machine's higher counters do not make this
    /// machine's own next command look like a replay.
    @Test func genuineFilesTheAccountSendsAgainAreRefusedAndCounted() async throws {
        let setup = try await Setup()
        defer { setup.cleanUp() }
        let fleetd = setup.fleetd
        let subject = FleetPushedCommands.subject(for: setup.device)
        try fleetd.start()
        try await eventually(timeout: 60, "fleetd is connected") { fleetd.log.contains("push: connected") }
        func command(_ number: Int) async throws {
            let issued = try await setup.admin("command", ["--device", setup.device, "--lock"])
            #expect(issued.status == 0, "\(issued.stderr)")
            let rang = try await setup.ring()
            #expect(rang.status == 0, "\(rang.stderr)")
            try await eventually(timeout: 60, "command \(number) is handed on") {
                fleetd.handedCommands.contains(FleetHandoff.commandFileName(number))
            }
        }
        try await command(1)
        let first = try setup.keptCommands(for: setup.device)
        try await command(2)
        #expect(try setup.keptCommands(for: setup.device) != first)
        // Another machine has had three commands: counters up to 3, above this machine's 2.
        let other = String(repeating: "b", count: 64)
        for _ in 1...3 {
            let theirs = try await setup.admin("command", ["--device", other, "--wipe"])
            #expect(theirs.status == 0, "\(theirs.stderr)")
        }
        #expect(try await setup.ring().status == 0)
        let handed = fleetd.handedCommands

        let attacker = try setup.rogueConnection()
        defer { attacker.close() }
        // Command 1's file, kept by the stream before command 2 replaced it: a replay.
        try attacker.publish(subject, first)
        try attacker.publish(subject, try setup.keptCommands(for: other))
        try attacker.flush()
        try await eventually(timeout: 60, "both are judged") {
            let text = (try? await FleetdMetricsEndToEndTests.scrape(setup.metrics).stdout) ?? ""
            return text.contains(#"cordon_fleetd_pushed_files_total{outcome="stale"} 1"#)
                && text.contains(#"cordon_fleetd_commands_total{outcome="refused",reason="otherDevice"} 3"#)
        }
        #expect(fleetd.handedCommands == handed)
        #expect(fleetd.audit.contains { $0["event"] == "push.stale" && $0["newestInFile"] == "1" })
        // Counted three times above; audited once a minute, since the account may send it at will.
        let audited = fleetd.audit.filter { $0["event"] == "command.refused" && $0["reason"] == "otherDevice" }
        #expect(audited.count == 1 && audited.first?["refusedSinceStart"] == "1", "\(audited)")
        #expect(!fleetd.audit.contains { $0["event"] == "command.accepted" && $0["kind"] == "wipe" })
        // This machine's own command 3 is still taken (before, the other machine's counter 3 was
        // recorded as spent here and this one was refused as a replay).
        try await command(3)
        #expect(!fleetd.audit.contains { $0["event"] == "command.refused" && $0["reason"] == "replayed" })
    }
}
