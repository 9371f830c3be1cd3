import ChannelTestPeers
import Foundation
import Testing

/// fleetd's metrics endpoint (`metrics.listen` in fleet.json) read by a real Prometheus: a
/// verified repository, a command handed on and one refused, then a rolled-back timestamp refused,
/// each in the series Prometheus stored; the text passes `promtool check metrics` (docs/FLEET.md,
/// "Metrics").
@Suite(.serialized) struct FleetdMetricsEndToEndTests {
    static func scrape(_ url: String) async throws -> CommandResult {
        try await runCommand(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-w", "\n%{http_code}", url])
    }

    @Test func aRealPrometheusReadsWhatFleetdVerifiedAndRefused() async throws {
        let port = try TestPorts.free()
        try await FleetdEndToEndTests.withFleet(metricsPort: port) { repository, _, fleetd in
            let device = try await fleetd.deviceID()
            try await repository.publish(["20-fleet.json": FleetdEndToEndTests.basePolicy])
            try await repository.command(device, "lock")
            try await repository.command(device, "lock", expiresIn: -60)
            try fleetd.start()
            let endpoint = "http://127.0.0.1:\(port)/metrics"
            try await eventually("fleetd verified the repository and judged both commands") {
                let text = try await Self.scrape(endpoint).stdout
                return text.contains(#"cordon_fleetd_commands_total{outcome="handed_on"} 1"#)
                    && text.contains(#"cordon_fleetd_commands_total{outcome="refused",reason="expired"} 1"#)
            }
            try await repository.attack("rollback-timestamp")
            try await eventually("fleetd refused the rolled-back timestamp") {
                let text = try await Self.scrape(endpoint).stdout
                return !text.contains(#"cordon_fleetd_verifications_failed_total{reason="rollback"} 0"#)
            }
            #expect(fleetd.isRunning, "\(fleetd.log)")

            // The endpoint's text, as promtool reads it; nothing but /metrics is served.
            let scraped = try await Self.scrape(endpoint)
            #expect(scraped.stdout.hasSuffix("\n200"), "\(scraped.stdout)")
            let body = String(scraped.stdout.dropLast(3))
            let checked = try await PrometheusServer.check(body)
            #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
            let other = try await Self.scrape("http://127.0.0.1:\(port)/")
            #expect(other.stdout.hasSuffix("\n404"), "\(other.stdout)")

            let prometheus = try PrometheusServer(scraping: "127.0.0.1:\(port)")
            defer { prometheus.stop() }
            try await eventually("Prometheus stored fleetd's refusals") {
                let failed = try await prometheus.query("cordon_fleetd_verifications_failed_total")
                return (failed[["reason": "rollback"]] ?? 0) >= 1 && failed[["reason": "hash"]] == 0
            }
            let commands = try await prometheus.query("cordon_fleetd_commands_total")
            #expect(commands[["outcome": "received"]] == 2, "\(commands)")
            #expect(commands[["outcome": "handed_on"]] == 1, "\(commands)")
            #expect(commands[["outcome": "refused", "reason": "expired"]] == 1, "\(commands)")
            #expect(commands[["outcome": "refused", "reason": "replayed"]] == 0, "\(commands)")
            let polls = try await prometheus.query("cordon_fleetd_polls_total")
            #expect((polls[["result": "updated"]] ?? 0) >= 1 && (polls[["result": "refused"]] ?? 0) >= 1, "\(polls)")
            let durations = try await prometheus.query("cordon_fleetd_poll_duration_seconds_count")
            #expect((durations[[:]] ?? 0) >= 2, "\(durations)")
            let age = try await prometheus.query("cordon_fleetd_policy_age_seconds")
            #expect(age[[:]].map { $0 >= 0 && $0 < 600 } == true, "\(age)")
        }
    }

    @Test func aNonLoopbackAddressIsRefusedAtStart() async throws {
        try await FleetdEndToEndTests.withFleet { _, _, fleetd in
            let settings = try String(contentsOfFile: fleetd.configPath, encoding: .utf8)
            try settings.replacingOccurrences(of: "}", with: #", "metrics": {"listen": "0.0.0.0:9477"}}"#)
                .write(toFile: fleetd.configPath, atomically: true, encoding: .utf8)
            let result = try await fleetd.pollOnce()
            #expect(result.status == 1, "\(result.stdout)")
            #expect(result.stderr.contains("/metrics/listen must be a loopback address"), "\(result.stderr)")
        }
    }
}
