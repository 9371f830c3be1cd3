import CordonFleet
import CordonStore

/// What one pass over the fleet directory does, decided without I/O (docs/ARCHITECTURE.md,
/// "Fleet commands in the agent"): each command once, in counter order.
///
/// - A command left `executing` (a kill mid-way) is performed again first: from its file when it
///   is still there, else from the ledger (kind and app).
/// - A file whose counter is recorded with the same digest is history: nothing.
/// - A different command under a recorded counter is refused `replayed` (audited, not recorded:
///   the ledger keeps what was taken).
/// - A counter at or below the container's floor predates the container: nothing.
/// - A counter at or below the highest recorded one is refused `replayed`, and recorded.
/// - Without `status.json` no device can be checked: the pass stops and waits for it.
/// - A command for another device (the file's, or one the command does not list) is refused
///   `otherDevice`, and recorded.
enum FleetPlan {
    /// One thing to do.
    enum Step: Sendable {
        /// Perform `command`: new, or left `executing` (`again`).
        case execute(FleetCommand, file: String?, again: Bool)
        /// Perform again a command left `executing` whose file is gone.
        case redo(FleetCommandRecord)
        /// Refuse `command`; `record` when its counter is free in the ledger.
        case refuse(FleetCommand, FleetCommandCheck.Refusal, detail: String, file: String, record: Bool)
    }

    /// The steps of one pass and, when it stopped early, why.
    struct Outcome: Sendable {
        var steps: [Step] = []
        var waiting: String?
    }

    static func steps(
        entries: [FleetDirectory.Entry], ledger: [Int: FleetCommandRecord], floor: Int?, device: String?
    ) -> Outcome {
        var outcome = Outcome()
        var commands: [(command: FleetCommand, device: String, file: String)] = []
        for entry in entries {
            if case .success(let parsed) = entry.parsed { commands.append((parsed.command, parsed.device, entry.name)) }
        }
        commands.sort { $0.command.counter < $1.command.counter }
        var handled: Set<Int> = []
        for record in ledger.values.sorted(by: { $0.counter < $1.counter }) where record.state == .executing {
            handled.insert(record.counter)
            if let file = commands.first(where: {
                $0.command.counter == record.counter && $0.command.digest == record.digest
            }) {
                outcome.steps.append(.execute(file.command, file: file.file, again: true))
            } else {
                outcome.steps.append(.redo(record))
            }
        }
        var highest = max(ledger.keys.max() ?? 0, floor ?? 0)
        for (command, fileDevice, file) in commands where !handled.contains(command.counter) {
            let counter = command.counter
            if let recorded = ledger[counter] {
                guard recorded.digest != command.digest else { continue }
                outcome.steps.append(
                    .refuse(
                        command, .replayed, detail: "a different command is recorded under counter \(counter)",
                        file: file, record: false))
                continue
            }
            if let floor, counter <= floor { continue }
            handled.insert(counter)
            guard counter > highest else {
                outcome.steps.append(
                    .refuse(
                        command, .replayed, detail: "counter \(counter) is not above \(highest), the highest taken",
                        file: file, record: true))
                continue
            }
            guard let device else {
                outcome.waiting = "no \(FleetHandoff.statusFile) names this device yet"
                break
            }
            highest = counter
            if fileDevice != device {
                outcome.steps.append(
                    .refuse(
                        command, .otherDevice, detail: "issued for \(fileDevice), this device is \(device)", file: file,
                        record: true))
                continue
            }
            outcome.steps.append(.execute(command, file: file, again: false))
        }
        return outcome
    }
}
