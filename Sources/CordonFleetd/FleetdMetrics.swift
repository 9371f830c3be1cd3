import CordonFleet
import CordonLocking
import Foundation
import Prometheus

/// fleetd's metrics (docs/FLEET.md, "Metrics"), kept in `registry` and emitted in the Prometheus
/// text format. Every counter's label values are known up front, so every series is there (at 0)
/// from the start and `rate()` sees the first event; the policy age is judged when scraped.
public final class FleetdMetrics: Sendable {
    /// How a poll ended, the `result` label of `cordon_fleetd_polls_total`.
    public enum PollResult: String, Sendable, CaseIterable {
        /// Verified, and the repository had changed.
        case updated
        /// Verified, nothing had changed (a 304, or the same timestamp).
        case unchanged
        /// The repository's metadata or a target was refused (`cordon_fleetd_verifications_failed_total`).
        case refused
        /// The repository could not be reached.
        case unreachable
        /// A local step failed (writing the policy directory, the hand-off, the state).
        case error
    }

    /// What became of a command file the push channel brought, the `outcome` label of
    /// `cordon_fleetd_pushed_files_total`.
    public enum PushedFile: String, Sendable, CaseIterable {
        /// Verified, with commands not judged before (each counted in `cordon_fleetd_commands_total`).
        case judged
        /// Verified, every command taken before, and none older than the newest taken: the file the
        /// stream keeps, read again at a reconnection.
        case repeated
        /// Verified, every command taken before, and the file older than what this machine took:
        /// genuine, sent again (a replay by whoever can publish on the subject, the NATS account
        /// itself among them, or a very late delivery). Nothing is executed.
        case stale
        /// Not verified (counted by the check in `cordon_fleetd_verifications_failed_total`), or
        /// dropped unread for its size.
        case refused
    }

    /// Where the metrics are kept; a test passes its own, the daemon one for the process.
    public let registry: PrometheusCollectorRegistry
    private let verificationsFailed: [TUFError.Kind: Counter]
    private let received: Counter
    private let handedOn: Counter
    private let refused: [FleetCommandCheck.Refusal: Counter]
    private let polls: [PollResult: Counter]
    private let rings: [String: Counter]
    private let pushedFiles: [PushedFile: Counter]
    private let ringsRefused: [TUFError.Kind: Counter]
    private let pollDuration: DurationHistogram
    private let policyAge: Gauge
    private let verifiedAt = Locked<Date?>(nil)

    /// The metrics, registered in `registry`.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        let failedHelp =
            "Refreshes, downloads and pushed command files refused by the TUF verifier, by the check that failed."
        verificationsFailed = Dictionary(
            uniqueKeysWithValues: TUFError.Kind.allCases.filter { $0 != .transport }.map { kind in
                (
                    kind,
                    registry.makeCounter(
                        descriptor: Self.name("verifications_failed", unit: "total", help: failedHelp),
                        labels: [("reason", kind.rawValue)])
                )
            })
        let commandsHelp = "Signed commands judged: received, handed on to the agents, or refused (by reason)."
        received = registry.makeCounter(
            descriptor: Self.name("commands", unit: "total", help: commandsHelp), labels: [("outcome", "received")])
        handedOn = registry.makeCounter(
            descriptor: Self.name("commands", unit: "total", help: commandsHelp), labels: [("outcome", "handed_on")])
        refused = Dictionary(
            uniqueKeysWithValues: FleetCommandCheck.Refusal.allCases.map { reason in
                (
                    reason,
                    registry.makeCounter(
                        descriptor: Self.name("commands", unit: "total", help: commandsHelp),
                        labels: [("outcome", "refused"), ("reason", reason.rawValue)])
                )
            })
        polls = Dictionary(
            uniqueKeysWithValues: PollResult.allCases.map { result in
                (
                    result,
                    registry.makeCounter(
                        descriptor: Self.name(
                            "polls", unit: "total", help: "Polls of the repository, by how they ended."),
                        labels: [("result", result.rawValue)])
                )
            })
        let ringsHelp = "Rings of the push channel's doorbell: a poll scheduled, joined to one, not newer, or refused."
        rings = Dictionary(
            uniqueKeysWithValues: ["poll", "joined", "not_newer"].map { outcome in
                (
                    outcome,
                    registry.makeCounter(
                        descriptor: Self.name("rings", unit: "total", help: ringsHelp), labels: [("outcome", outcome)])
                )
            })
        ringsRefused = Dictionary(
            uniqueKeysWithValues: TUFError.Kind.allCases.filter { $0 != .transport }.map { kind in
                (
                    kind,
                    registry.makeCounter(
                        descriptor: Self.name("rings", unit: "total", help: ringsHelp),
                        labels: [("outcome", "refused"), ("reason", kind.rawValue)])
                )
            })
        pushedFiles = Dictionary(
            uniqueKeysWithValues: PushedFile.allCases.map { outcome in
                (
                    outcome,
                    registry.makeCounter(
                        descriptor: Self.name(
                            "pushed_files", unit: "total",
                            help: "Command files the push channel brought: judged, repeated, stale (genuine, older "
                                + "than what was taken: a replay) or refused."),
                        labels: [("outcome", outcome.rawValue)])
                )
            })
        pollDuration = registry.makeDurationHistogram(
            descriptor: Self.name(
                "poll_duration", unit: "seconds",
                help: "How long a poll took, from the timestamp request to the saved state."),
            buckets: [
                .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
            ])
        policyAge = registry.makeGauge(
            descriptor: Self.name(
                "policy_age", unit: "seconds",
                help: "Seconds since the repository last verified (-1 before the first verification)."))
        policyAge.set(-1.0)
    }

    /// `cordon_fleetd_<metric>_<unit>`, with its help text.
    private static func name(_ metric: String, unit: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "cordon", subsystem: "fleetd", metricName: metric, unitName: unit, helpText: help)
    }

    /// A refresh or a download refused for `kind` (a transport failure is not a verification).
    public func verificationFailed(_ kind: TUFError.Kind) {
        verificationsFailed[kind]?.increment()
    }

    /// A command judged for the first time, accepted and handed on, or refused.
    public func command(_ verdict: FleetCommandCheck.Verdict) {
        received.increment()
        switch verdict {
        case .accept: handedOn.increment()
        case .refuse(_, let reason): refused[reason]?.increment()
        }
    }

    /// A ring of the doorbell was judged.
    public func ring(_ decision: FleetDoorbell.Decision) {
        switch decision {
        case .poll: rings["poll"]?.increment()
        case .alreadyScheduled: rings["joined"]?.increment()
        case .notNewer: rings["not_newer"]?.increment()
        case .refused(let error): ringsRefused[error.kind]?.increment()
        }
    }

    /// A pushed message dropped unread for its size: counted as the verifier's `length` refusal of
    /// its kind (a command file's verification, a ring).
    public func oversized(_ channel: FleetPush.Channel) {
        switch channel {
        case .commands:
            verificationsFailed[.length]?.increment()
            pushedFiles[.refused]?.increment()
        case .doorbell: ringsRefused[.length]?.increment()
        }
    }

    /// A command file the push channel brought was judged `outcome`.
    public func pushedFile(_ outcome: PushedFile) {
        pushedFiles[outcome]?.increment()
    }

    /// A poll ended with `result` after `duration`.
    public func poll(_ result: PollResult, duration: Duration) {
        polls[result]?.increment()
        pollDuration.record(duration)
    }

    /// The repository last verified at `date` (from the saved state at start, then each poll).
    public func verified(at date: Date?) {
        verifiedAt.withLock { $0 = date }
    }

    /// The metrics in the Prometheus text format (version 0.0.4), the policy age judged at `now`.
    public func emit(now: Date = Date()) -> [UInt8] {
        let age = verifiedAt.withLock { $0 }.map { max(0, now.timeIntervalSince($0)) } ?? -1
        policyAge.set(age)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
