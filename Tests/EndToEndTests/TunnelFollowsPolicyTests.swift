import ChannelTestPeers
import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// Issue #32, item 1, through a running `cordon run --tunnel` with a real cordond (all as the
/// ordinary user, outside test mode): the admin re-pins the host to another key and reloads; the
/// connection open to the old key is cut at once, the cut is in the agent's audit log with its
/// reason, new connections are verified against the new pins (refused), and pinning the old key
/// again serves again — without restarting `cordon run`. CordonKit's own `secureChannel()` reports
/// its cuts to the audit log the same way.
@Suite struct TunnelFollowsPolicyTests {
    typealias Tunnels = TunnelEndToEndTests

    /// Root's admin policy pinning 127.0.0.1 to `pin` (under the test CA), as `setUp` writes it.
    static func pinPolicy(_ setup: Tunnels.Setup, pin: String) throws {
        let policy: [String: Any] = [
            "schema": "cordon.policy.v1",
            "apps": ["unknown": "trusted"],
            "network": [
                "pins": [["hosts": ["127.0.0.1"], "pinSha256": [pin], "caCertificates": [setup.pki.caPEM]]],
                "unpinnedHosts": "deny",
            ],
        ]
        try JSONSerialization.data(withJSONObject: policy).write(
            to: URL(fileURLWithPath: setup.agent.system.appending("admin/10-apps.json")), options: .atomic)
    }

    @Test func aRunningTunnelFollowsARePin() async throws {
        let setup = try await Tunnels.setUp()
        defer { setup.agent.cleanUp() }
        let appId = "com.example.repinned"
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let (run, stderr) = try Tunnels.startRun(setup, port: peer.port, appId: appId)
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        _ = try await RunCommandTests.programPID(setup.agent, appId: appId)
        try await eventually("the tunnel serves") { try await Tunnels.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        let held = try Tunnels.client("hold", socket)
        defer { held.stop() }
        try await eventually("a connection is open through the tunnel") {
            held.snapshot.first == "open HTTP/1.1 200 OK"
        }

        // The admin pins the host to another key (the server's key is, say, compromised).
        let other = try setup.pki.leaf("replacement", names: ["127.0.0.1"])
        try Self.pinPolicy(setup, pin: try setup.pki.pin(other.certificate))
        let reload = try await setup.agent.cli(["policy", "reload"])
        #expect(reload.status == 0, "\(reload.stderr)")
        try await eventually("the open connection to the old key is cut") { held.snapshot.last == "cut" }
        // A same-user process gets no byte from the old key through the running tunnel.
        #expect(try await Tunnels.get(socket) == "closed 0 bytes")
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("127.0.0.1"), "\(log)")
        #expect(log.contains("policy"), "\(log)")

        // The cut is in the agent's audit log, for the app, with the reason.
        var cuts: [[String: Any]] = []
        try await eventually("the cut is audited") {
            let audit = try await setup.agent.cli(["audit", "--app", appId, "--json"])
            cuts = audit.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["action"] as? String == "network.cut" }
            return !cuts.isEmpty
        }
        let reason = cuts.first?["reason"] as? String ?? ""
        #expect(cuts.count == 1, "\(cuts)")
        #expect(reason.contains("127.0.0.1") && reason.contains("policy changed"), "\(reason)")
        #expect(reason.contains("10-apps.json#/network/pins/0"), "\(reason)")

        // The attack: a same-user process writes cuts into the app's audit log. Unregistered it
        // gets NotRegistered, with a guessed token InvalidToken; registered as an app of its own,
        // its report is recorded under its own id, never the tunnel app's.
        let attack = try await setup.agent.attack(
            """
            cut = {"cuts": [{"host": "127.0.0.1", "reason": "forged"}]}
            s = connect(sys.argv[1])
            unregistered = call(s, "io.cordon.App.ReportChannelCuts", cut)
            guessed = call(s, "io.cordon.App.ReportChannelCuts", dict(cut, token="guessed-token"))
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.forger"})
            own = call(s, "io.cordon.App.ReportChannelCuts", cut)
            print(json.dumps({"unregistered": error(unregistered), "guessed": error(guessed),
                              "registered": error(reg), "own": error(own)}))
            """)
        #expect(attack["unregistered"] as? String == "io.cordon.App.NotRegistered", "\(attack)")
        #expect(attack["guessed"] as? String == "io.cordon.App.InvalidToken", "\(attack)")
        #expect(attack["registered"] is NSNull, "\(attack)")
        #expect(attack["own"] is NSNull, "\(attack)")
        let after = try await setup.agent.cli(["audit", "--json"])
        let forged = after.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { ($0["reason"] as? String)?.hasSuffix("forged") == true }
        #expect(forged.map { $0["appId"] as? String } == ["com.example.forger"], "\(forged)")

        // Pinned to the server's key again, the same running tunnel serves again.
        try Self.pinPolicy(setup, pin: try setup.pki.pin(setup.leaf.certificate))
        #expect(try await setup.agent.cli(["policy", "reload"]).status == 0)
        try await eventually("the tunnel serves the re-pinned key") {
            try await Tunnels.get(socket).hasPrefix("HTTP/1.1 200 OK")
        }
    }

    /// CordonKit's `app.secureChannel()` in the test process against a root daemon (only an
    /// in-process SDK can be driven so): a request in flight to a key the reloaded policy no
    /// longer pins fails with `policyChanged`, and the cut is in the audit log under the app's id.
    @Test func theSDKChannelAuditsItsPolicyCuts() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("upstream", names: ["127.0.0.1"])
        let daemon = try await Tunnels.rootDaemon(pki, leaf)
        defer { daemon.cleanUp() }
        let stalled = try TLSPeer(mode: "stall-response", certificate: leaf.certificate, key: leaf.key)
        defer { stalled.stop() }
        let app = try await CordonApp.connect(appId: "com.example.sdkcut", socketPath: daemon.socketPath)
        let channel = try await app.secureChannel()
        let url = "https://127.0.0.1:\(stalled.port)/held"
        let request = Task { () -> SecureChannelError? in
            do throws(SecureChannelError) {
                _ = try await channel.request(url: url)
                return nil
            } catch { return error }
        }
        await app.channelGate.opened(atLeast: 1)
        let other = try pki.leaf("replacement", names: ["127.0.0.1"])
        let policy: [String: Any] = [
            "schema": "cordon.policy.v1",
            "network": [
                "pins": [
                    [
                        "hosts": ["127.0.0.1"], "pinSha256": [try pki.pin(other.certificate)],
                        "caCertificates": [pki.caPEM],
                    ]
                ],
                "unpinnedHosts": "deny",
            ],
        ]
        try JSONSerialization.data(withJSONObject: policy).write(
            to: URL(fileURLWithPath: daemon.root.appending("admin/50-network.json")), options: .atomic)
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        let error = await request.value
        guard case .policyChanged(let host, _) = error else {
            Issue.record("expected policyChanged, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        var cuts: [AuditEntry] = []
        try await eventually("the cut is audited") {
            cuts = try await client.audit(appId: "com.example.sdkcut").filter { $0.action == "network.cut" }
            return !cuts.isEmpty
        }
        #expect(cuts.count == 1)
        #expect(cuts.first?.reason.contains("50-network.json#/network/pins/0") == true, "\(cuts)")
        await client.close()
        await app.close()
        try await daemon.stop()
    }
}
