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
    ///   - taken: the digest of every command already taken (accepted or refused) on this machine, by
    ///     counter. A command taken before is history (the file may go on listing it) and gets no
    ///     verdict; a different command under a counter at or below the highest taken is `replayed`.
    public func verdicts(
        _ file: FleetCommandFile, listedBy role: String, signers: Int, wipeThreshold: Int, taken: [Int: [UInt8]],
        now: Date
    ) -> [Verdict] {
        var out: [Verdict] = []
        let highest = taken.keys.max() ?? 0
        for command in file.commands {
            if let digest = taken[command.counter], digest == command.digest { continue }
            guard command.counter > highest else {
                out.append(.refuse(command, .replayed))
                continue
            }
            if role != "commands" {
                out.append(.refuse(command, .notCommandRole))
            } else if file.device != device {
                out.append(.refuse(command, .otherDevice))
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
