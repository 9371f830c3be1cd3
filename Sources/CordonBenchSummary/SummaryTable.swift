/// The summary of every target as one table: plain text for the terminal, or Markdown for
/// docs/PERFORMANCE.md. Below it, each record's note (why a target was skipped, how it was
/// measured) and a count of the verdicts.
public struct SummaryTable {
    public let records: [SummaryRecord]

    public init(records: [SummaryRecord]) {
        self.records = records
    }

    static let headers = ["benchmark", "measured", "target", "baseline", "median", "spread", "runs met", "status"]
    /// Columns aligned to the right in the text table (the figures).
    static let rightAligned: Set<Int> = [4, 5, 6]

    /// One row of cells per record.
    var rows: [[String]] {
        records.map { record in
            let figures: [String]
            if let median = record.median, let spread = record.spread {
                figures = [
                    SummaryFormat.value(median, unit: record.unit),
                    SummaryFormat.spread(spread.low, spread.high, unit: record.unit),
                    "\(record.runsMet) of \(record.values.count)",
                ]
            } else {
                figures = ["–", "–", "–"]
            }
            return [record.benchmark, record.subject, record.target, record.baseline ?? "– (absolute)"] + figures
                + [record.status.rawValue]
        }
    }

    /// `12 targets: 9 met, 2 not met, 1 skipped`.
    var tally: String {
        let count = { (status: SummaryStatus) in records.filter { $0.status == status }.count }
        return "\(records.count) targets: \(count(.met)) met, \(count(.notMet)) not met, \(count(.skipped)) skipped"
    }

    /// The notes, one line each, naming their record.
    var notes: [String] {
        records.compactMap { record in
            record.note.map { note in
                "\(record.benchmark), \(record.subject): " + (record.status == .skipped ? "skipped: " : "") + note
            }
        }
    }

    /// The table in plain text, columns padded to their widest cell.
    public func text() -> String {
        let table = [Self.headers] + rows
        let widths = Self.headers.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return Self.rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [line(Self.headers), line(widths.map { String(repeating: "-", count: $0) })]
        lines += rows.map(line)
        lines.append("")
        lines += notes
        lines.append(tally)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The table in Markdown (GitHub's pipe tables), the notes as a list below it.
    public func markdown() -> String {
        func line(_ cells: [String]) -> String {
            "| " + cells.map { $0.replacingPipes() }.joined(separator: " | ") + " |"
        }
        var lines = [line(Self.headers), "| " + Self.headers.map { _ in "---" }.joined(separator: " | ") + " |"]
        lines += rows.map(line)
        lines.append("")
        if !notes.isEmpty {
            lines += notes.map { "- " + $0 }
            lines.append("")
        }
        lines.append(tally + ".")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }

    fileprivate func replacingPipes() -> String {
        split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
    }
}
