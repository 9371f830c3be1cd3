import CordonProtocol
import Prometheus

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's metrics (docs/ARCHITECTURE.md, "Metrics"), kept in `registry` and written as a
/// Prometheus text file (`--metrics-file`, `MetricsFileService`); cordond listens on no port.
/// Every series is made up front (the interfaces, the outcomes), so a call costs an atomic add and
/// a histogram's own lock, never the registry's.
public final class AgentMetrics: Sendable {
    /// Whether a registered app meets the posture conditions (`cordon_agent_apps{compliance}`).
    public enum Compliance: String, Sendable, CaseIterable {
        /// The device's last reading passed every check the policy blocks or warns on.
        case compliant
        /// A `block` check revoked its key, or a `warn` check failed.
        case noncompliant
        /// No reading yet.
        case unknown
    }

    /// Where the metrics are kept.
    public let registry: PrometheusCollectorRegistry
    private let calls: [String: DurationHistogram]
    private let otherCalls: DurationHistogram
    private let decision: DurationHistogram
    private let connections: Gauge
    private let apps: [Compliance: Gauge]
    private let executed: Counter
    private let refused: Counter
    private let stale: Gauge

    /// The metrics, registered in `registry`, each series labelled with the agent's user: every
    /// user's file can sit under one textfile collector without two files naming the same series.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), uid: UInt32 = getuid()) {
        self.registry = registry
        let user = ("uid", String(uid))
        let buckets: [Duration] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
        ]
        let callHelp = "Varlink calls served, from the message read to its reply written, by interface."
        func call(_ interface: String) -> DurationHistogram {
            registry.makeDurationHistogram(
                descriptor: Self.name("call_duration", unit: "seconds", help: callHelp),
                labels: [user, ("interface", interface)], buckets: buckets)
        }
        calls = Dictionary(uniqueKeysWithValues: InterfaceDescriptions.all.keys.map { ($0, call($0)) })
        otherCalls = call("other")
        decision = registry.makeDurationHistogram(
            descriptor: Self.name(
                "decision_duration", unit: "seconds",
                help: "Policy decisions (pasteboard, documents, network, checks), each with its audit queued."),
            labels: [user], buckets: buckets)
        connections = registry.makeGauge(
            descriptor: Self.name("connections", unit: "", help: "Open connections to the agent."), labels: [user])
        apps = Dictionary(
            uniqueKeysWithValues: Compliance.allCases.map { compliance in
                (
                    compliance,
                    registry.makeGauge(
                        descriptor: Self.name(
                            "apps", unit: "",
                            help: "Registered apps, by whether the device's posture meets their conditions."),
                        labels: [user, ("compliance", compliance.rawValue)])
                )
            })
        let fleetHelp = "cordon-fleetd's commands this agent executed or refused."
        executed = registry.makeCounter(
            descriptor: Self.name("fleet_commands", unit: "total", help: fleetHelp),
            labels: [user, ("outcome", "executed")])
        refused = registry.makeCounter(
            descriptor: Self.name("fleet_commands", unit: "total", help: fleetHelp),
            labels: [user, ("outcome", "refused")])
        stale = registry.makeGauge(
            descriptor: Self.name(
                "policy_stale", unit: "", help: "1 while the fleet policy is stale (conditions.policyStale), else 0."),
            labels: [user])
    }

    /// `cordon_agent_<metric>[_<unit>]`, with its help text.
    private static func name(_ metric: String, unit: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "cordon", subsystem: "agent", metricName: metric, unitName: unit, helpText: help)
    }

    /// A call on `interface` took `nanoseconds` from its read to its reply.
    func call(_ interface: String, nanoseconds: UInt64) {
        (calls[interface] ?? otherCalls).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A policy decision took `nanoseconds`.
    func decided(nanoseconds: UInt64) {
        decision.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// `count` connections are open.
    func connections(_ count: Int) {
        connections.set(Int64(count))
    }

    /// The registered apps, counted by compliance.
    func apps(_ counts: [Compliance: Int]) {
        for (compliance, gauge) in apps { gauge.set(Int64(counts[compliance] ?? 0)) }
    }

    /// A fleet command executed (true) or refused.
    func fleetCommand(executed: Bool) {
        (executed ? self.executed : refused).increment()
    }

    /// Whether the fleet policy is stale.
    func policyStale(_ isStale: Bool) {
        stale.set(isStale ? 1.0 : 0.0)
    }

    /// The metrics in the Prometheus text format (version 0.0.4).
    public func emit() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
