import CordonKit
import CordonProtocol
import CordonSystem
import Foundation

/// Writes to stdout and stderr with `write(2)`: unbuffered, so every line reaches a pipe at once.
enum Output {
    /// Writes `line` and a newline to stdout.
    static func line(_ line: String = "") throws {
        guard write(line + "\n", to: STDOUT_FILENO) else {
            if errno == EPIPE {
                // The reader went away (`cordon events --follow | head -1`): end quietly, as SIGPIPE would.
                _ = signal(SIGPIPE, SIG_DFL)
                _ = raise(SIGPIPE)
            }
            throw CLIError(
                "cannot write to standard output: \(String(cString: strerror(errno)))",
                hint: "check where the output goes (a closed pipe or a full disk?)")
        }
    }

    /// Writes `line` and a newline to stderr; failures are ignored (there is nowhere left to report them).
    static func note(_ line: String) {
        _ = write(line + "\n", to: STDERR_FILENO)
    }

    /// Prints `error` as `cordon: error: …` and `hint: …` on stderr.
    static func error(_ error: CLIError) {
        note("cordon: error: \(error.message)\nhint: \(error.hint)")
    }

    /// Encodes `value` as JSON with sorted keys (pretty-printed unless `compact`).
    static func json<T: Encodable>(_ value: T, compact: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            compact
            ? [.sortedKeys, .withoutEscapingSlashes]
            : [
                .sortedKeys, .prettyPrinted, .withoutEscapingSlashes,
            ]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Writes all of `text` to `descriptor`, retrying short writes and interrupted calls.
    private static func write(_ text: String, to descriptor: Int32) -> Bool {
        DescriptorWriter.writeAll(Array(text.utf8), to: descriptor)
    }
}

/// Small formatting helpers shared by the commands.
enum Format {
    /// `1 attempt`, `3 attempts`.
    static func count(_ value: Int, _ noun: String) -> String { ErrorText.count(value, noun) }

    /// Whole seconds, rounded up: `1 second`, `4 seconds`.
    static func seconds(_ value: Double) -> String { ErrorText.seconds(value) }

    /// An ISO 8601 UTC timestamp with milliseconds.
    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `yes` or `no`.
    static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

    /// Left-aligned columns separated by two spaces; the last column is not padded.
    static func table(_ rows: [[String]]) -> [String] {
        guard let columns = rows.map(\.count).max(), columns > 0 else { return [] }
        var widths = Array(repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}
