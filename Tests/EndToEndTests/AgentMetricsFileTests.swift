import Foundation
import Testing

/// cordond's metrics file (`--metrics-file`), written by an agent run as the ordinary user: the
/// text passes `promtool check metrics` with the agent's series in it; a link planted at its name
/// is not followed, and a directory another user can write is refused at start
/// (docs/ARCHITECTURE.md, "Metrics"; docs/THREAT-MODEL.md, "Metrics").
@Suite(.serialized) struct AgentMetricsFileTests {
    /// A directory of the user's own (0755) for the file.
    static func userDirectory() async throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try await NobodyAgent.run(["/bin/chown", "\(UserAgent.uid):\(TestUser.gid)", directory.path])
        return directory
    }

    /// The value of the sample `series` (its name and labels as written) in `text`.
    static func value(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }

    @Test func theAgentWritesItsMetricsForTheTextfileCollector() async throws {
        let directory = try await Self.userDirectory()
        defer { directory.remove() }
        let file = directory.appending("agent.prom")
        let agent = try await UserAgent(
            policy: AttackIdentityTests.trusted, arguments: ["--metrics-file", file])
        defer { agent.cleanUp() }
        try await eventually("the first write") { FileManager.default.fileExists(atPath: file) }
        for _ in 0..<3 {
            let status = try await agent.cli(["status"])
            #expect(status.status == 0, "\(status.stderr)")
        }
        // At exit the agent writes once more: everything above is in it.
        #expect(agent.terminate() == 0, "\(agent.log)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let checked = try await PrometheusServer.check(text)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let user = #"uid="\#(UserAgent.uid)""#
        let calls = Self.value(
            #"cordon_agent_call_duration_seconds_count{\#(user),interface="io.cordon.Agent"}"#, in: text)
        #expect((calls ?? 0) >= 5, "init, unlock and three status calls at least: \(text)")
        for series in [
            "cordon_agent_connections{\(user)}", #"cordon_agent_apps{\#(user),compliance="compliant"}"#,
            #"cordon_agent_apps{\#(user),compliance="unknown"}"#,
            #"cordon_agent_fleet_commands_total{\#(user),outcome="executed"}"#, "cordon_agent_policy_stale{\(user)}",
            "cordon_agent_decision_duration_seconds_count{\(user)}",
        ] {
            #expect(Self.value(series, in: text) != nil, "\(series): \(text)")
        }
        #expect(Self.value("cordon_agent_policy_stale{\(user)}", in: text) == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect((attributes[.ownerAccountID] as? Int) == Int(UserAgent.uid))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["agent.prom"], "no leftovers")
    }

    /// The deployment docs/ARCHITECTURE.md ("Metrics") describes: one directory per user under a
    /// root-owned one, node_exporter reading them all by glob, Prometheus scraping node_exporter.
    @Test func aRealPrometheusReadsTheAgentThroughNodeExporter() async throws {
        let metrics = try TemporaryDirectory()
        defer { metrics.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: metrics.path)
        let directory = metrics.appending(TestUser.name)
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try await NobodyAgent.run(["/bin/chown", "\(UserAgent.uid):\(TestUser.gid)", directory])
        let agent = try await UserAgent(
            policy: AttackIdentityTests.trusted, arguments: ["--metrics-file", directory + "/agent.prom"])
        defer { agent.cleanUp() }
        _ = try await agent.cli(["status"])
        #expect(agent.terminate() == 0, "\(agent.log)")

        let exporter = try NodeExporter(
            textfiles: metrics.path + "/*", log: agent.system.appending("node-exporter.log"))
        defer { exporter.stop() }
        let prometheus = try PrometheusServer(scraping: exporter.target)
        defer { prometheus.stop() }
        try await eventually("Prometheus stored the agent's calls, labelled with its user") {
            let calls = try await prometheus.query(
                #"cordon_agent_call_duration_seconds_count{interface="io.cordon.Agent"}"#)
            return (calls[["uid": UserAgent.uid, "interface": "io.cordon.Agent"]] ?? 0) >= 3
        }
        let stale = try await prometheus.query("cordon_agent_policy_stale")
        #expect(stale == [["uid": UserAgent.uid]: 0], "\(stale)")
        let apps = try await prometheus.query("cordon_agent_apps")
        #expect(apps.count == 3 && apps.keys.allSatisfy { $0["uid"] == UserAgent.uid }, "\(apps)")
        #expect(!exporter.log.contains("level=error"), "\(exporter.log)")
    }

    @Test func aLinkIsNotFollowedAndAnotherUsersDirectoryIsRefused() async throws {
        let directory = try await Self.userDirectory()
        defer { directory.remove() }
        let victim = try await Self.userDirectory()
        defer { victim.remove() }
        let target = victim.appending("victim.prom")
        try "untouched\n".write(toFile: target, atomically: true, encoding: .utf8)
        let file = directory.appending("agent.prom")
        let agent = try await UserAgent(policy: AttackIdentityTests.trusted, arguments: ["--metrics-file", file])
        defer { agent.cleanUp() }
        try await eventually("the first write") { FileManager.default.fileExists(atPath: file) }

        // A link planted at the name while the agent runs: its last write is refused, not followed.
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
        #expect(agent.terminate() == 0, "\(agent.log)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched\n")
        #expect(agent.log.contains("metrics not written"), "\(agent.log)")
        let linked = try await agent.startAgain()
        #expect(linked.status == 2 && linked.stderr.contains("not a regular file"), "\(linked.stderr)")

        // A directory another user can write (root's, 0777), or another user's: refused at start.
        try FileManager.default.removeItem(atPath: file)
        try await NobodyAgent.run(["/bin/chown", "0:0", directory.path])
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let shared = try await agent.startAgain()
        #expect(shared.status == 2 && shared.stderr.contains("writable by another user"), "\(shared.stderr)")
        try await NobodyAgent.run(["/bin/chown", "\(NobodyAgent.uid):0", directory.path])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let foreign = try await agent.startAgain()
        #expect(foreign.status == 2 && foreign.stderr.contains("writable by another user"), "\(foreign.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched\n")
    }
}
