/// Why a summary file could not be read.
public enum SummaryFileError: Error, Equatable, CustomStringConvertible {
    /// The file could not be opened or is not UTF-8.
    case unreadable(path: String, reason: String)
    /// A line that is not a summary record (1-based line number).
    case malformedLine(path: String, line: Int, reason: String)
    /// The file holds no records.
    case empty(path: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the summary \(path): \(reason)"
        case .malformedLine(let path, let line, let reason): "\(path):\(line): not a summary record: \(reason)"
        case .empty(let path): "the summary \(path) holds no records (run the benchmarks with --summary \(path))"
        }
    }
}
