import Foundation

/// A summary file: one JSON `SummaryRecord` per line, appended to by each benchmark run with
/// `--summary` and read back by `cordon-bench summary`.
public enum SummaryFile {
    /// Appends `records` to the file at `path`, creating it when missing.
    public static func append(_ records: [SummaryRecord], to path: String) throws {
        guard !records.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = Data()
        for record in records {
            text.append(try encoder.encode(record))
            text.append(UInt8(ascii: "\n"))
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw SummaryFileError.unreadable(path: path, reason: "cannot create it")
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: text)
    }

    /// The records of the file at `path`, in order.
    public static func read(_ path: String) throws -> [SummaryRecord] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SummaryFileError.unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SummaryFileError.unreadable(path: path, reason: "not UTF-8")
        }
        let records = try parse(text, path: path)
        guard !records.isEmpty else { throw SummaryFileError.empty(path: path) }
        return records
    }

    /// The records in `text` (blank lines skipped); a malformed line throws, naming it.
    public static func parse(_ text: String, path: String) throws -> [SummaryRecord] {
        let decoder = JSONDecoder()
        var records: [SummaryRecord] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            do {
                records.append(try decoder.decode(SummaryRecord.self, from: Data(line.utf8)))
            } catch {
                throw SummaryFileError.malformedLine(path: path, line: index + 1, reason: reason(error))
            }
        }
        return records
    }

    /// A decoding error in a few words: the field and what is wrong with it.
    private static func reason(_ error: any Error) -> String {
        let field = { (path: [any CodingKey]) in path.map(\.stringValue).joined(separator: ".") }
        switch error as? DecodingError {
        case .keyNotFound(let key, _): return "no \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(field(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "\(field(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted: return "not JSON"
        default: return "\(error)"
        }
    }
}
