import ArgumentParser
import CordonBenchSummary

/// `cordon-bench summary PATH`: every target the benchmarks appended to PATH, as one table.
struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Print the targets the benchmarks appended with --summary as one table.",
        discussion: """
            One row per target: the benchmark, what it measures, the target, the baseline it is measured \
            against in the same run, the median of the runs, their spread (lowest–highest run), how many \
            runs met the target alone, and whether the target is met (the median within it, and every run \
            within a per-run bound where the target sets one). `make bench` prints it at the end; \
            --markdown prints the same table for docs/PERFORMANCE.md.
            """)

    @Argument(help: "The summary file the benchmarks wrote (--summary).")
    var path: String
    @Flag(help: "Print the table as Markdown.")
    var markdown = false

    func run() throws {
        let table = SummaryTable(records: try SummaryFile.read(path))
        print(markdown ? table.markdown() : table.text(), terminator: "")
    }
}
