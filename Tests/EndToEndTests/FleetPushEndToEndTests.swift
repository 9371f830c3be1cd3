import CordonFleet
import CordonNATS
import Crypto
import Foundation
import NATSTestServer
import Testing

/// The push channel's doorbell end to end: a workspace made with `cordon fleet`, served by nginx,
/// a real nats-server whose users are the workspace's push key and the machine's own key, and
/// fleetd polling once an hour. `cordon fleet ring` brings a new command to the machine in
/// seconds; forged and replayed rings, sent by a publisher the server lets ring (the server and its
/// accounts are not trusted), make no poll and are audited.
@Suite(.serialized) struct FleetPushEndToEndTests {
    static let policy = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#

    @Test func aRingBringsACommandInSecondsAndForgedRingsNone() async throws {
        let workspace = try TemporaryDirectory()
        defer { workspace.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.path)
        let fleet = workspace.appending("fleet")
        let policies = workspace.appending("policies")
        try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
        try Self.policy.write(toFile: policies + "/20-fleet.json", atomically: true, encoding: .utf8)
        for arguments in [["init", fleet], ["publish", fleet, "--policies", policies]] {
            let result = try await runCommand(Binaries.cordon, ["fleet"] + arguments)
            #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
        }
        let pushKey = try await runCommand(Binaries.cordon, ["fleet", "push-key", fleet])
        #expect(pushKey.status == 0, "\(pushKey.stderr)")
        let adminKey = pushKey.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let mode = try FileManager.default.attributesOfItem(atPath: fleet + "/keys/push.nk")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let nginx = try NginxServer(serving: fleet + "/repository")
        defer { nginx.stop() }
        try await nginx.ready()
        let shipped = workspace.appending("root.json")
        try FileManager.default.copyItem(atPath: fleet + "/repository/1.root.json", toPath: shipped)
        let target = try TemporaryDirectory()
        defer { target.remove() }
        let fleetd = try FleetdProcess(shippedRoot: shipped, nginx: nginx, policyDirectory: target.path, interval: 3600)
        defer { fleetd.cleanUp() }
        let device = try await fleetd.deviceID()
        let machineKey = try await fleetd.nkey()

        // A publisher the server lets ring too: what a compromised account or server could send.
        let rogue = Curve25519.Signing.PrivateKey()
        let rogueKey = NATSNKey.user(publicKey: Array(rogue.publicKey.rawRepresentation))
        let server = try NATSServer(users: [
            NATSServer.User(nkey: adminKey, publish: [FleetDoorbell.subject], subscribe: ["_INBOX.admin.>"]),
            NATSServer.User(nkey: rogueKey, publish: [FleetDoorbell.subject], subscribe: ["_INBOX.rogue.>"]),
            NATSServer.User(
                nkey: machineKey, publish: ["_INBOX.\(device).>"],
                subscribe: [FleetDoorbell.subject, "_INBOX.\(device).>"]),
        ])
        defer { server.stop() }
        try fleetd.addPush(servers: [server.url])
        try fleetd.start()
        try await eventually(timeout: 60, "fleetd's first poll installs the policy") {
            FileManager.default.fileExists(atPath: target.appending("20-fleet.json"))
        }

        // Forged (another key's signature), replayed (the timestamp the machine has) and garbage rings.
        var options = NATSOptions(servers: [server.url], name: "rogue")
        options.nkey = rogueKey
        options.signer = { nonce in Array((try? rogue.signature(for: nonce)) ?? Data()) }
        let attacker = try NATSConnection(options)
        defer { attacker.close() }
        let current = try Array(Data(contentsOf: URL(fileURLWithPath: fleet + "/repository/timestamp.json")))
        // A newer version under the old signature.
        var document = try #require(try JSONSerialization.jsonObject(with: Data(current)) as? [String: Any])
        var signed = try #require(document["signed"] as? [String: Any])
        signed["version"] = ((signed["version"] as? Int) ?? 1) + 100
        document["signed"] = signed
        let forged = Array(try JSONSerialization.data(withJSONObject: document))
        try await eventually(timeout: 60, "forged rings are refused and audited") {
            for ring in [forged, current, Array("ding".utf8)] { try attacker.publish(FleetDoorbell.subject, ring) }
            try attacker.flush()
            let refused = fleetd.audit.filter { $0["event"] == "doorbell.refused" }.compactMap { $0["kind"] }
            return Set(refused).isSuperset(of: ["threshold", "malformed"])
        }
        #expect(!fleetd.log.contains("the doorbell rang"), "a forged or replayed ring made a poll: \(fleetd.log)")
        #expect(fleetd.handedCommands.isEmpty)

        // The admin's command, uploaded (nginx serves the workspace), then the ring.
        let issued = try await runCommand(Binaries.cordon, ["fleet", "command", fleet, "--device", device, "--lock"])
        #expect(issued.status == 0, "\(issued.stderr)")
        let started = Date()
        var handed = false
        // A ring is at most once (core NATS); the doorbell's delay is up to 10 s.
        for _ in 0..<4 where !handed {
            let rang = try await runCommand(Binaries.cordon, ["fleet", "ring", fleet, "--nats", server.url])
            #expect(rang.status == 0, "\(rang.stderr)")
            #expect(rang.stdout.hasPrefix("rang: timestamp v"), "\(rang.stdout)")
            handed =
                (try? await eventually(timeout: 15, "the ring brings the command") {
                    fleetd.handedCommands == [FleetHandoff.commandFileName(1)]
                }) != nil
        }
        #expect(handed, "\(fleetd.log)")
        print("push: the command was handed on \(Int(Date().timeIntervalSince(started))) s after the first ring")
        #expect(fleetd.log.contains("the doorbell rang"))
        #expect(fleetd.audit.contains { $0["event"] == "command.accepted" && $0["kind"] == "lock" })
    }
}
