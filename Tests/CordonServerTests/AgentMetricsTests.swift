import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// The agent's metrics set on a registry of its own: every series there from the start, labelled
/// with the user, each event visible in the emitted text.
@Suite struct AgentMetricsTests {
    static func text(_ metrics: AgentMetrics) -> String { String(decoding: metrics.emit(), as: UTF8.self) }

    @Test func everySeriesIsThereFromTheStart() {
        let text = Self.text(AgentMetrics(uid: 1000))
        for interface in InterfaceDescriptions.all.keys {
            #expect(
                text.contains(#"cordon_agent_call_duration_seconds_count{uid="1000",interface="\#(interface)"} 0"#),
                "\(text)")
        }
        #expect(text.contains(#"cordon_agent_apps{uid="1000",compliance="unknown"} 0"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{uid="1000",outcome="refused"} 0"#))
        #expect(text.contains(#"cordon_agent_connections{uid="1000"} 0"#))
        #expect(text.contains(#"cordon_agent_policy_stale{uid="1000"} 0"#))
        #expect(text.contains("# TYPE cordon_agent_decision_duration_seconds histogram"))
    }

    @Test func eventsAreCounted() {
        let metrics = AgentMetrics(uid: 1000)
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
        #expect(
            text.contains(#"cordon_agent_call_duration_seconds_count{uid="1000",interface="io.cordon.Agent"} 2"#),
            "\(text)")
        #expect(
            text.contains(
                #"cordon_agent_call_duration_seconds_bucket{uid="1000",interface="io.cordon.Agent",le="0.0001"} 1"#))
        #expect(text.contains(#"cordon_agent_call_duration_seconds_count{uid="1000",interface="other"} 1"#))
        #expect(text.contains(#"cordon_agent_decision_duration_seconds_count{uid="1000"} 1"#))
        #expect(text.contains(#"cordon_agent_connections{uid="1000"} 3"#))
        #expect(text.contains(#"cordon_agent_apps{uid="1000",compliance="compliant"} 2"#))
        #expect(text.contains(#"cordon_agent_apps{uid="1000",compliance="noncompliant"} 1"#))
        #expect(text.contains(#"cordon_agent_apps{uid="1000",compliance="unknown"} 0"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{uid="1000",outcome="executed"} 1"#))
        #expect(text.contains(#"cordon_agent_fleet_commands_total{uid="1000",outcome="refused"} 2"#))
        #expect(text.contains(#"cordon_agent_policy_stale{uid="1000"} 1"#))
    }
}
