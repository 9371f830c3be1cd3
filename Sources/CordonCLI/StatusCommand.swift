import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon status`: the container's state and the agent's settings.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the container's state, the attempt counter and the agent's settings.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the status as a JSON object (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let status = try await client.status()
        await client.close()
        if json {
            try Output.line(try Output.json(status))
        } else {
            for line in Self.describe(status) { try Output.line(line) }
        }
    }

    /// The human-readable lines for `status`.
    static func describe(_ status: AgentStatus) -> [String] {
        var rows: [[String]] = [
            // The state as users say it, with the protocol's name (`--json`, events) beside it.
            ["state:", status.state == .unlocked ? "unlocked" : "\(status.state.userName) (\(status.state.rawValue))"],
            ["key available:", Format.yesNo(status.state.keyAvailable)],
            ["failed attempts:", attemptsDescription(status)],
            ["retry delay:", status.retryAfterSeconds > 0 ? Format.seconds(status.retryAfterSeconds) : "none"],
            [
                "idle timeout:",
                status.idleTimeoutSeconds > 0 ? Format.count(status.idleTimeoutSeconds, "second") : "off",
            ],
            ["re-auth grace:", Format.count(status.reauthGraceSeconds, "second")],
            ["ack deadline:", "\(status.ackDeadlineMs) ms"],
            ["apps:", "\(status.apps)"],
            ["events so far:", "\(status.seq)"],
            ["version:", status.version],
        ]
        rows += lockTriggerRows(status)
        rows += protectionRows(status.keyProtection)
        rows.append(["audit log:", auditDescription(status.auditProblem)])
        if let fleet = status.fleet { rows.append(["fleet:", fleetDescription(fleet)]) }
        var lines = Format.table(rows)
        if status.testMode == true {
            lines.append(
                "WARNING: cordond runs in TEST MODE: its admin inputs come from flags and environment, not an "
                    + "administered policy")
        }
        if let warning = status.keyProtection?.warning { lines.append("WARNING: \(warning)") }
        if let fleet = status.fleet, fleet.stale, fleet.policyStale != "off" {
            lines.append(
                "WARNING: the fleet policy is stale (conditions.policyStale: \(fleet.policyStale)): cordon-fleetd "
                    + "verified no fresh metadata in time")
        }
        if status.insecureKDF {
            lines.append(
                "WARNING: cordond runs with the INSECURE fast KDF (tests only): passcodes are trivial to brute-force")
        }
        return lines
    }

    /// `ok`, or what is failing since when.
    /// `2 of 10`, and what reaching the maximum does when the agent says.
    static func attemptsDescription(_ status: AgentStatus) -> String {
        let count = "\(status.failedAttempts) of \(status.maxAttempts)"
        switch status.onMaxAttempts {
        case "wipe": return count + " (then the container is erased)"
        case "lockout": return count + " (then cordond locks out)"
        default: return count
        }
    }

    static func auditDescription(_ problem: AuditProblem?) -> String {
        guard let problem else { return "ok" }
        let since = Format.time(Date(timeIntervalSince1970: problem.since))
        let records = Format.count(problem.unstored, "record")
        return "FAILING since \(since): \(records) only in cordond's log (\(problem.error))"
    }

    /// The fleet row: the device, when its metadata last verified, stale or not, the last command.
    static func fleetDescription(_ fleet: FleetStatus) -> String {
        var parts = ["device \(fleet.device ?? "unknown (no status.json)")"]
        parts.append(
            "verified " + (fleet.verifiedAt.map { Format.time(Date(timeIntervalSince1970: $0)) } ?? "never"))
        parts.append(fleet.stale ? "STALE (policyStale: \(fleet.policyStale))" : "fresh")
        parts.append("last command " + (fleet.lastCommand ?? "none"))
        if let problem = fleet.problem { parts.append("problem: \(problem)") }
        return parts.joined(separator: "; ")
    }

    /// What protects the key and, with a TPM, its lockout state as the TPM reports it.
    static func protectionRows(_ protection: KeyProtectionStatus?) -> [[String]] {
        guard let protection else { return [] }
        var kind: String
        switch protection.kind {
        case "tpm+pcrs": kind = "TPM with PCRs " + (protection.pcrs ?? []).map(String.init).joined(separator: ",")
        case "tpm": kind = "TPM without PCRs"
        default: kind = "software only (scrypt; no TPM limits guesses)"
        }
        var rows = [["key protection:", kind]]
        if let problem = protection.problem {
            rows.append(["TPM problem:", problem])
        } else if protection.inLockout == true {
            let retry = Format.seconds(protection.retryAfterSeconds ?? 0)
            rows.append(["TPM lockout:", "LOCKED OUT: one attempt again in \(retry)"])
        } else if let left = protection.attemptsLeft, let max = protection.maxFailures {
            rows.append(["TPM lockout:", "\(left) of \(max) attempts left before the TPM locks out"])
        }
        if protection.problem == nil {
            rows.append([
                "state anchor:", protection.stateAnchor ?? "none: a restored or edited database goes unnoticed",
            ])
        }
        return rows
    }

    /// The lock triggers row (none for agents that predate them).
    static func lockTriggerRows(_ status: AgentStatus) -> [[String]] {
        guard let triggers = status.lockTriggers else { return [] }
        return [["lock triggers:", triggers.isEmpty ? "none (no D-Bus)" : triggers.joined(separator: ", ")]]
    }
}
