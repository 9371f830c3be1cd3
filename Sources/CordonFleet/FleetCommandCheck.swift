import Foundation

/// Which of a machine's commands to hand on, and why the others are refused: the checks fleetd makes
/// after the repository verified (docs/ARCHITECTURE.md, "Fleet", "Commands").
public struct FleetCommandCheck: Sendable {
    /// Why a command is refused (each audited).
    public enum Refusal: String, Sendable, Hashable, CaseIterable {
        /// The counter is not above the last one this machine took (a replay, or an older command).
        case replayed
        /// Accepted no later than `expires`; it came later.
        case expired
        /// The file or the command names another machine.
        case otherDevice
        /// A wipe of more than one machine, with fewer command keys than the root's wipe threshold.
        case wipeThreshold
        /// Listed by a role other than `commands` (the targets role cannot issue commands).
        case notCommandRole
        /// Issued later than the time it was judged at (a clock far behind, or a forged time).
        case issuedInFuture

        /// Whether the refused command was this machine's, so that its counter is spent. Another
        /// machine's command, or one a role that cannot issue commands listed, is not: were its
        /// counter recorded, whoever can send a genuine file on this machine's subject (the NATS
        /// account) could raise this machine's highest counter with another machine's file, and
        /// this machine's own next commands would be refused as replays.
        public var spendsCounter: Bool {
            switch self {
            case .otherDevice, .notCommandRole: false
            case .replayed, .expired, .wipeThreshold, .issuedInFuture: true
            }
        }
    }

    /// One command's fate.
    public enum Verdict: Sendable, Hashable {
        case accept(FleetCommand)
        case refuse(FleetCommand, Refusal)

        /// The command judged.
        public var command: FleetCommand {
            switch self {
            case .accept(let command), .refuse(let command, _): command
            }
        }
    }

    /// This machine's id.
    public var device: String
    /// How far ahead of `now` an issue time may be (clock skew between the admin and the machine).
    public var allowedSkew: TimeInterval = 300

    public init(device: String) { self.device = device }

    /// The verdict on each command of `file` above `lastCounter`, in counter order.
    /// - Parameters:
    ///   - file: the parsed command file; `listedBy` the role that listed it and `signers` how many
    ///     distinct keys of that role signed; `wipeThreshold` the root's.
    ///   - taken: the digest of every command already taken (accepted, or refused with a reason that
    ///     `spendsCounter`) on this machine, by counter. A command taken before is history (the file
    ///     may go on listing it) and gets no verdict; a different command of this machine's under a
    ///     counter at or below the highest taken is `replayed`.
    public func verdicts(
        _ file: FleetCommandFile, listedBy role: String, signers: Int, wipeThreshold: Int, taken: [Int: [UInt8]],
        now: Date
    ) -> [Verdict] {
        var out: [Verdict] = []
        let highest = taken.keys.max() ?? 0
        for command in file.commands {
            if let digest = taken[command.counter], digest == command.digest { continue }
            // Who the file is for and who listed it first: another machine's counters say nothing
            // about this machine's.
            if role != "commands" {
                out.append(.refuse(command, .notCommandRole))
            } else if file.device != device {
                out.append(.refuse(command, .otherDevice))
            } else if command.counter <= highest {
                out.append(.refuse(command, .replayed))
            } else if now >= command.expires {
                out.append(.refuse(command, .expired))
            } else if command.issued > now.addingTimeInterval(allowedSkew) {
                out.append(.refuse(command, .issuedInFuture))
            } else if command.kind.destroys, command.machines > 1, signers < wipeThreshold {
                out.append(.refuse(command, .wipeThreshold))
            } else {
                out.append(.accept(command))
            }
        }
        return out
    }
}
