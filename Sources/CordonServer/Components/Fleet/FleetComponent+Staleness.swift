import CordonFleet
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import NIOCore

/// `conditions.policyStale` (docs/ARCHITECTURE.md, "Fleet commands in the agent"): judged here,
/// from `status.json`, whenever the directory is read, the policy changes, the container unlocks,
/// and at `staleAfter` (a timer on the agent's clock).
///
/// - `warn`: `cordon status` and `doctor` show it; audited when it starts.
/// - `block`: every policy decision is denied (`PolicyStaleGate`, read by `DecisionsComponent`).
/// - `lock`: the container is locked, and locked again at every unlock, while stale.
extension FleetComponent {
    /// Whether the policy counts as stale at `now`: nil without a fleet directory; a directory
    /// without a readable `status.json` is stale (fleetd never verified).
    static func isStale(_ reading: FleetDirectory.Reading, now: Double) -> Bool? {
        guard reading.exists else { return nil }
        guard let status = reading.status else { return true }
        return status.isStale(at: Date(timeIntervalSince1970: now))
    }

    /// What every decision is denied with while `conditions.policyStale` is `block` and the policy is stale.
    var policyStaleBlock: PolicyStaleBlock? {
        guard directory != nil, stale else { return nil }
        let setting = host.policy.policy[PolicyKeys.Conditions.policyStale]
        guard setting.value == .block else { return nil }
        return PolicyStaleBlock(
            reason: "conditions.policyStale is \"block\" and the fleet policy is stale (\(staleness))",
            rules: setting.rules)
    }

    /// Why the policy is stale, in words.
    var staleness: String {
        guard let status = reading.status else { return "no \(FleetHandoff.statusFile): never verified" }
        guard let staleAfter = status.staleAfter else { return "never verified" }
        return "no fresh metadata verified since \(staleAfter.formatted(.iso8601))"
    }

    /// Judges the staleness now and applies `conditions.policyStale`; schedules the next judgement
    /// at `staleAfter`.
    func evaluateStaleness(why: String) {
        guard directory != nil, !host.isShuttingDown else { return }
        let now = host.clock()
        let isStale = Self.isStale(reading, now: now) ?? false
        host.configuration.metrics.policyStale(isStale)
        let setting = host.policy.policy[PolicyKeys.Conditions.policyStale]
        let action = setting.value
        if isStale != stale {
            stale = isStale
            if isStale {
                host.logger.warning(
                    "fleet: the policy is stale",
                    metadata: ["why": "\(staleness)", "policyStale": "\(action.rawValue)"])
            } else {
                host.logger.notice("fleet: the policy is fresh again")
            }
        }
        if !isStale, auditedStale != nil {
            auditedStale = nil
            audit(outcome: "fresh", reason: "the fleet policy is fresh again", rules: setting.rules)
        } else if isStale, action != .off, auditedStale != action {
            auditedStale = action
            audit(
                outcome: action.rawValue, reason: "conditions.policyStale is \"\(action.rawValue)\": \(staleness)",
                rules: setting.rules)
        }
        if isStale, action == .lock, host.lifecycleState == .unlocked {
            host.logger.warning("fleet: locking the container: the policy is stale", metadata: ["after": "\(why)"])
            audit(outcome: "locked", reason: "conditions.policyStale is \"lock\": \(staleness)", rules: setting.rules)
            // Not inside the broadcast that may have called this: the machine runs one input at a time.
            host.loop.assumeIsolated().execute { [self] in
                guard stale, host.lifecycleState == .unlocked else { return }
                host.run(.lock(reason: .policy, now: host.clock()))
            }
        }
        scheduleStalenessTimer(now: now, isStale: isStale)
    }

    private func scheduleStalenessTimer(now: Double, isStale: Bool) {
        staleTimer?.cancel()
        staleTimer = nil
        guard !isStale, let staleAfter = reading.status?.staleAfter?.timeIntervalSince1970 else { return }
        let delay = min(max(0, staleAfter - now), 400 * 86400)
        staleTimer = host.loop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay * 1000) + 1)) { [self] in
            staleTimer = nil
            evaluateStaleness(why: "staleAfter reached")
        }
    }

    private func audit(outcome: String, reason: String, rules: [RuleReference]) {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "fleet", appId: nil, action: "fleet.policyStale", outcome: outcome,
                reason: reason, rules: rules.map(\.description))
        ])
    }
}

/// What every decision is denied with while the fleet policy is stale and `conditions.policyStale`
/// is `block`.
struct PolicyStaleBlock: Sendable, Equatable {
    var reason: String
    var rules: [RuleReference]
}
