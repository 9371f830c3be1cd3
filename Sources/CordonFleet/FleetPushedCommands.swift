import CordonProtocol
import Foundation

/// A machine's commands as the push channel carries them (docs/ARCHITECTURE.md, "Fleet push"): the
/// machine's command file signed, like metadata, by the keys of the role the trusted targets
/// delegate its path to (`commands`). A machine verifies it against the delegation it already
/// trusts, without fetching anything; `FleetCommandCheck` then judges each command as for one the
/// repository listed (counters, expiry, device, wipe threshold). The server carries it untrusted.
public enum FleetPushedCommands {
    /// The `_type` of the signed object.
    public static let type = "cordon-push-commands"
    /// The JetStream stream that keeps the last message of every machine's subject.
    public static let stream = "CORDON_FLEET_COMMANDS"
    /// Every machine's command subject.
    public static let subjects = "cordon.fleet.cmd.>"
    /// The largest pushed file a machine reads.
    public static let maximumLength = 256 * 1024

    /// `device`'s command subject.
    public static func subject(for device: String) -> String { "cordon.fleet.cmd.\(device)" }
    /// The stream that keeps every machine's last signed report.
    public static let reportStream = "CORDON_FLEET_REPORTS"
    public static let reportSubjects = "cordon.fleet.report.>"
    /// `device`'s report subject.
    public static func reportSubject(for device: String) -> String { "cordon.fleet.report.\(device)" }

    /// What a verified file gives: the commands, the role whose keys signed them, how many
    /// distinct keys of it signed.
    public struct Verified: Sendable {
        public var file: FleetCommandFile
        public var role: String
        public var signers: Int
    }

    /// Verifies `bytes` for the machine `device` against what it trusts: the role `trusted`'s
    /// targets delegate `commands/<device>.json` to, by its threshold of keys; unexpired at `now`.
    public static func verify(_ bytes: [UInt8], trusted: TUFTrustedSet, device: String, now: Date) throws(TUFError)
        -> Verified
    {
        guard bytes.count <= maximumLength else {
            throw TUFError(.length, role: "commands", "a pushed file of \(bytes.count) bytes (over \(maximumLength))")
        }
        let (envelope, signed) = try TUFEnvelope.parse(bytes, type: type, role: "commands")
        guard let top = trusted.targets["targets"] else {
            throw TUFError(.notFound, role: "commands", "no targets metadata is trusted yet: poll first")
        }
        let path = FleetCommandFile.path(for: device)
        guard let delegated = top.delegations.first(where: { $0.covers(path) }) else {
            throw TUFError(.notFound, role: "commands", "the trusted targets delegate \(path) to no role")
        }
        let signers = try top.verify(delegated, envelope)
        guard !envelope.isExpired(at: now) else {
            throw TUFError(
                .expired, role: "commands", "every pushed command expired by \(TUFDate.format(envelope.expires))")
        }
        var commands: [FleetCommand] = []
        for (index, element) in try signed.array("commands").enumerated() {
            commands.append(
                try FleetCommand(TUFFields(element, at: signed.path("commands") + "/\(index)", role: "commands")))
        }
        return Verified(
            file: FleetCommandFile(device: try signed.string("device"), commands: commands), role: delegated.name,
            signers: signers)
    }
}
