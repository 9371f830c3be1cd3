import ArgumentParser
import CordonBenchSummary

/// `--summary PATH`, on every subcommand that measures a target: its targets are appended to
/// PATH as JSON lines, which `cordon-bench summary PATH` prints as one table.
struct SummaryOption: ParsableArguments {
    @Option(
        name: .customLong("summary"),
        help: ArgumentHelp(
            "Append this run's targets to this file (JSON lines; print them with `cordon-bench summary`).",
            valueName: "path"))
    var path: String?

    /// Appends `records` when `--summary` was given.
    func append(_ records: [SummaryRecord]) throws {
        guard let path else { return }
        try SummaryFile.append(records, to: path)
    }
}
