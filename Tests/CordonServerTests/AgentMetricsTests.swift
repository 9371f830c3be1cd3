import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// The agent's metrics set on a registry of its own: every series there from the start, each
/// event visible in the emitted text.
@Suite struct AgentMetricsTests {
    static func text(_ metrics: AgentMetrics) -> String { String(decoding: metrics.emit(), as: UTF8.self) }

    @Test func everySeriesIsThereFromTheStart() {
        let text = Self.text(AgentMetrics())
        for interface in InterfaceDescriptions.all.keys {
            #expect(text.contains(#"cordon_agent_call_duration_seconds_count{interface="\#(interface)"} 0"#), "\(text)")
        }
        #expect(text.contains(#"cordon_agent_apps{compliance="unknown"} 0"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{outcome="refused"} 0"#))
        #expect(text.contains("cordon_agent_connections 0"))
        #expect(text.contains("cordon_agent_policy_stale 0"))
        #expect(text.contains("# TYPE cordon_agent_decision_duration_seconds histogram"))
    }

    @Test func eventsAreCounted() {
        let metrics = AgentMetrics()
        metrics.call("io.cordon.Agent", nanoseconds: 80_000)
        metrics.call("io.cordon.Agent", nanoseconds: 3_000_000)
        metrics.call("com.example.Unknown", nanoseconds: 1)
        metrics.decided(nanoseconds: 20_000)
        metrics.connections(3)
        metrics.apps([.compliant: 2, .noncompliant: 1])
        metrics.fleetCommand(executed: true)
        metrics.fleetCommand(executed: false)
        metrics.fleetCommand(executed: false)
        metrics.policyStale(true)
        let text = Self.text(metrics)
        #expect(text.contains(#"cordon_agent_call_duration_seconds_count{interface="io.cordon.Agent"} 2"#), "\(text)")
        #expect(text.contains(#"cordon_agent_call_duration_seconds_bucket{interface="io.cordon.Agent",le="0.0001"} 1"#))
        #expect(text.contains(#"cordon_agent_call_duration_seconds_count{interface="other"} 1"#))
        #expect(text.contains("cordon_agent_decision_duration_seconds_count 1"))
        #expect(text.contains("cordon_agent_connections 3"))
        #expect(text.contains(#"cordon_agent_apps{compliance="compliant"} 2"#))
        #expect(text.contains(#"cordon_agent_apps{compliance="noncompliant"} 1"#))
        #expect(text.contains(#"cordon_agent_apps{compliance="unknown"} 0"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{outcome="executed"} 1"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{outcome="refused"} 2"#))
        #expect(text.contains("cordon_agent_policy_stale 1"))
    }
}
