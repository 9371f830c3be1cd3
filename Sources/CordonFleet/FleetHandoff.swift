import CordonProtocol
import Foundation

/// What fleetd (root) hands the per-user agents through its directory, `/var/lib/cordon/fleet`
/// (docs/ARCHITECTURE.md, "Fleet"): `commands/<counter>.json`, one verified command each, and
/// `status.json`, how fresh the machine's view of the repository is. The directory and its files are
/// root's and out of every other user's reach; an agent opens it as an admin input and trusts what
/// it reads there as it trusts `/etc/cordon/policy.d`.
public enum FleetHandoff {
    /// The commands directory's name under the fleet directory.
    public static let commandsDirectory = "commands"
    /// The status file's name under the fleet directory.
    public static let statusFile = "status.json"

    /// A command file's name: the counter, zero-padded so names sort as counters do.
    public static func commandFileName(_ counter: Int) -> String {
        let digits = String(counter)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + ".json"
    }

    /// One verified command as fleetd writes it.
    public static func commandBytes(_ command: FleetCommand, device: String, verifiedAt: Date) -> [UInt8] {
        let value = JSONValue.object([
            "_type": .string("cordon-fleet-command"), "device": .string(device), "command": command.json,
            "verifiedAt": .string(TUFDate.format(verifiedAt)),
        ])
        return ((try? CanonicalJSON.encode(value, role: "handoff")) ?? []) + [UInt8(ascii: "\n")]
    }

    /// A command file's command and the device it was verified for.
    public static func command(_ bytes: [UInt8]) throws(TUFError) -> (command: FleetCommand, device: String) {
        let fields = try TUFFields(CanonicalJSON.parse(bytes, role: "handoff"), at: "", role: "handoff")
        let type = try fields.string("_type")
        guard type == "cordon-fleet-command" else {
            throw TUFError(.malformed, role: "handoff", "/_type is \"\(type)\", not \"cordon-fleet-command\"")
        }
        return (try FleetCommand(fields.object("command")), try fields.string("device"))
    }

    /// How fresh the machine's view of its repository is.
    public struct Status: Sendable, Equatable {
        public var device: String
        public var repository: String
        /// When metadata last verified (a fresh timestamp, or one unchanged and unexpired).
        public var verifiedAt: Date?
        /// The trusted timestamp's (or root's, if earlier) expiry.
        public var freshUntil: Date?
        /// `freshUntil` plus the poll interval: from then on `conditions.policyStale` applies.
        public var staleAfter: Date?
        /// The trusted versions by role.
        public var versions: [String: Int]
        /// The last refusal or transport failure, for `cordon fleet status`/`doctor`.
        public var lastError: String?

        public init(
            device: String, repository: String, verifiedAt: Date?, freshUntil: Date?, staleAfter: Date?,
            versions: [String: Int], lastError: String?
        ) {
            self.device = device
            self.repository = repository
            self.verifiedAt = verifiedAt
            self.freshUntil = freshUntil
            self.staleAfter = staleAfter
            self.versions = versions
            // An error's text may span lines (a server's message); the file holds it on one line,
            // since canonical JSON would write a line break raw and the reader refuses it.
            self.lastError = lastError.map(CanonicalJSON.oneLine)
        }

        /// Whether the policy is stale at `now`: no fresh metadata verified in time, or never.
        public func isStale(at now: Date) -> Bool {
            guard let staleAfter else { return true }
            return now >= staleAfter
        }

        public var bytes: [UInt8] {
            var members: [String: JSONValue] = [
                "_type": .string("cordon-fleet-status"), "device": .string(device), "repository": .string(repository),
                "versions": .object(versions.mapValues(JSONValue.int)),
            ]
            if let verifiedAt { members["verifiedAt"] = .string(TUFDate.format(verifiedAt)) }
            if let freshUntil { members["freshUntil"] = .string(TUFDate.format(freshUntil)) }
            if let staleAfter { members["staleAfter"] = .string(TUFDate.format(staleAfter)) }
            if let lastError { members["lastError"] = .string(lastError) }
            return ((try? CanonicalJSON.encode(.object(members), role: "handoff")) ?? []) + [UInt8(ascii: "\n")]
        }

        public init(_ bytes: [UInt8]) throws(TUFError) {
            let fields = try TUFFields(CanonicalJSON.parse(bytes, role: "handoff"), at: "", role: "handoff")
            let type = try fields.string("_type")
            guard type == "cordon-fleet-status" else {
                throw TUFError(.malformed, role: "handoff", "/_type is \"\(type)\", not \"cordon-fleet-status\"")
            }
            device = try fields.text("device")
            repository = try fields.text("repository")
            verifiedAt = fields.value["verifiedAt"] == nil ? nil : try fields.date("verifiedAt")
            freshUntil = fields.value["freshUntil"] == nil ? nil : try fields.date("freshUntil")
            staleAfter = fields.value["staleAfter"] == nil ? nil : try fields.date("staleAfter")
            var versions: [String: Int] = [:]
            let versionFields = try fields.object("versions")
            for (role, _) in versionFields.members { versions[role] = try versionFields.integer(role) }
            self.versions = versions
            lastError = fields.value["lastError"] == nil ? nil : try fields.text("lastError")
        }
    }
}
