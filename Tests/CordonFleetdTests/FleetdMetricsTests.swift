import CordonFleet
import CordonFleetd
import Foundation
import Prometheus
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// fleetd's metrics set on a registry of its own (the global MetricsSystem is never bootstrapped
/// here): what each event adds is in the emitted text.
@Suite struct FleetdMetricsTests {
    static func text(_ metrics: FleetdMetrics, now: Date = Date()) -> String {
        String(decoding: metrics.emit(now: now), as: UTF8.self)
    }

    static func command(_ counter: Int) -> FleetCommand {
        let now = Date()
        return FleetCommand(
            counter: counter, kind: .lock, app: nil, issued: now, expires: now.addingTimeInterval(60))
    }

    @Test func everySeriesIsThereFromTheStart() {
        let text = Self.text(FleetdMetrics())
        #expect(text.contains(#"cordon_fleetd_verifications_failed_total{reason="rollback"} 0"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_verifications_failed_total{reason="threshold"} 0"#))
        #expect(!text.contains(#"reason="transport""#), "a transport failure is not a verification")
        #expect(text.contains(#"cordon_fleetd_commands_total{outcome="refused",reason="replayed"} 0"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_polls_total{result="unreachable"} 0"#))
        #expect(text.contains("cordon_fleetd_policy_age_seconds -1"), "never verified")
        #expect(text.contains("# HELP cordon_fleetd_poll_duration_seconds"))
        #expect(text.contains("# TYPE cordon_fleetd_poll_duration_seconds histogram"))
    }

    @Test func eventsAreCounted() throws {
        let metrics = FleetdMetrics()
        metrics.verificationFailed(.hash)
        metrics.verificationFailed(.hash)
        metrics.verificationFailed(.transport)
        metrics.command(.accept(Self.command(1)))
        metrics.command(.refuse(Self.command(2), .expired))
        metrics.poll(.updated, duration: .milliseconds(30))
        metrics.poll(.refused, duration: .seconds(3))
        let text = Self.text(metrics)
        #expect(text.contains(#"cordon_fleetd_verifications_failed_total{reason="hash"} 2"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_commands_total{outcome="received"} 2"#))
        #expect(text.contains(#"cordon_fleetd_commands_total{outcome="handed_on"} 1"#))
        #expect(text.contains(#"cordon_fleetd_commands_total{outcome="refused",reason="expired"} 1"#))
        #expect(text.contains(#"cordon_fleetd_polls_total{result="updated"} 1"#))
        #expect(text.contains(#"cordon_fleetd_polls_total{result="refused"} 1"#))
        #expect(text.contains(#"cordon_fleetd_poll_duration_seconds_bucket{le="0.05"} 1"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_poll_duration_seconds_count 2"#))
    }

    @Test func doorbellRingsAreCountedByOutcome() {
        let metrics = FleetdMetrics()
        let now = Date()
        metrics.ring(.poll(at: now))
        metrics.ring(.alreadyScheduled(at: now))
        metrics.ring(.alreadyScheduled(at: now))
        metrics.ring(.notNewer(version: 3))
        metrics.ring(.refused(TUFError(.threshold, role: "timestamp", "forged")))
        let text = Self.text(metrics)
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="poll"} 1"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="joined"} 2"#))
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="not_newer"} 1"#))
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="refused",reason="threshold"} 1"#))
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="refused",reason="expired"} 0"#))
    }

    @Test func oversizedPushedMessagesAreCountedAsLengthRefusals() {
        let metrics = FleetdMetrics()
        metrics.oversized(.doorbell)
        metrics.oversized(.commands)
        metrics.oversized(.commands)
        let text = Self.text(metrics)
        #expect(text.contains(#"cordon_fleetd_rings_total{outcome="refused",reason="length"} 1"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_verifications_failed_total{reason="length"} 2"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="refused"} 2"#), "\(text)")
    }

    @Test func pushedFilesAreCountedByOutcome() {
        let metrics = FleetdMetrics()
        metrics.pushedFile(.judged)
        metrics.pushedFile(.stale)
        metrics.pushedFile(.stale)
        let text = Self.text(metrics)
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="judged"} 1"#), "\(text)")
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="repeated"} 0"#))
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="stale"} 2"#))
        #expect(text.contains(#"cordon_fleetd_pushed_files_total{outcome="refused"} 0"#))
    }

    @Test func thePolicyAgeIsJudgedWhenScraped() {
        let metrics = FleetdMetrics()
        let verified = Date(timeIntervalSince1970: 1_800_000_000)
        metrics.verified(at: verified)
        #expect(
            Self.text(metrics, now: verified.addingTimeInterval(90)).contains("cordon_fleetd_policy_age_seconds 90"))
        #expect(Self.text(metrics, now: verified.addingTimeInterval(-5)).contains("cordon_fleetd_policy_age_seconds 0"))
    }

    @Test func theEndpointServesMetricsAndNothingElse() async throws {
        let metrics = FleetdMetrics()
        metrics.verificationFailed(.expired)
        let server = try await FleetdMetricsServer.start(host: "127.0.0.1", port: 0, metrics: metrics)
        defer { Task { await server.stop() } }
        let base = "http://127.0.0.1:\(server.port)"
        let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: base + "/metrics")))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(
            String(decoding: body, as: UTF8.self).contains(
                #"cordon_fleetd_verifications_failed_total{reason="expired"} 1"#))
        for path in ["/", "/metrics/x", "/debug"] {
            let (_, other) = try await URLSession.shared.data(from: try #require(URL(string: base + path)))
            #expect((other as? HTTPURLResponse)?.statusCode == 404, "\(path)")
        }
    }
}
