import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon audit`: the audit log, and with `--follow` every record as it is written.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Print the audit log: decisions, enforcement and policy changes; --follow keeps printing.",
        discussion: """
            Columns: time (UTC), category, app, action, outcome, reason. Records are printed oldest first: \
            the newest --limit of those since --since, then, with --follow, every new record as it is \
            written (each line flushed at once) until cordond closes the stream (exit 0) or the command is \
            interrupted. With --json, one JSON object per line (the keys of io.cordon.Audit.Record, time in \
            Unix seconds).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "Only records since then: a duration back from now (30s, 10m, 2h, 1d, 1w, 1h30m), Unix seconds, "
                + "or an ISO 8601 time.", valueName: "time"))
    var since: AuditTime?

    @Option(name: .customLong("app"), help: ArgumentHelp("Only records about this app.", valueName: "id"))
    var appId: String?

    @Option(help: ArgumentHelp("At most this many records (the newest) before following.", valueName: "n"))
    var limit = 100

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(help: "Keep printing records as they are written.")
    var follow = false

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let client = try await global.connect()
        let records = try await client.audit(since: since?.date, appId: appId, limit: limit)
        var table = AuditTable(fitting: records)
        if !json {
            if records.isEmpty && !follow {
                try Output.line("no audit records match")
            } else {
                try Output.line(table.header)
            }
        }
        for record in records { try Output.line(try render(record, &table)) }
        guard follow else {
            await client.close()
            return
        }
        // Resume after the last record shown; records the agent sends again are skipped by id.
        var lastId = records.last?.id ?? 0
        let stream = try await client.followAudit(since: records.last?.date ?? since?.date ?? Date(), appId: appId)
        await client.close()
        do {
            for try await record in stream where record.id > lastId {
                lastId = record.id
                try Output.line(try render(record, &table))
            }
        } catch CordonClientError.connectionClosed {
            Output.note("cordon: cordond closed the audit stream")
        }
    }

    /// One line for `record`.
    func render(_ record: AuditEntry, _ table: inout AuditTable) throws -> String {
        json ? try Output.json(record, compact: true) : table.row(record)
    }
}

/// Audit lines in columns: widths fit the first records and header, later cells overflow.
struct AuditTable {
    static let titles = ["TIME", "CATEGORY", "APP", "ACTION", "OUTCOME", "REASON"]
    private var widths = [24, 11, 18, 16, 8]

    init(fitting records: [AuditEntry]) {
        for record in records {
            for (index, cell) in Self.cells(record).dropLast().enumerated() {
                widths[index] = max(widths[index], cell.count)
            }
        }
    }

    var header: String { line(Self.titles) }

    func row(_ record: AuditEntry) -> String { line(Self.cells(record)) }

    static func cells(_ record: AuditEntry) -> [String] {
        [
            Format.time(record.date), record.category.rawValue, record.appId ?? "-", record.action ?? "-",
            record.outcome,
            record.reason,
        ]
    }

    private func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index < widths.count
                ? cell.padding(toLength: max(widths[index], cell.count), withPad: " ", startingAt: 0)
                : cell
        }.joined(separator: "  ")
    }
}

/// A point in time given as a duration back from now, Unix seconds, or ISO 8601.
struct AuditTime: ExpressibleByArgument, Sendable {
    var date: Date

    init?(argument: String) {
        if let seconds = Double(argument), seconds.isFinite, seconds >= 0 {
            date = Date(timeIntervalSince1970: seconds)
        } else if let duration = Self.duration(argument) {
            date = Date().addingTimeInterval(-duration)
        } else if let time = Self.iso8601(argument) {
            date = time
        } else {
            return nil
        }
    }

    /// `1h30m` → 5400; `nil` unless the text is one or more NUMBER+UNIT (s, m, h, d, w).
    static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var total = 0.0
        var number = ""
        for character in text {
            if character.isASCII, character.isNumber || character == "." {
                number.append(character)
            } else if let unit = units[character], let value = Double(number) {
                total += value * unit
                number = ""
            } else {
                return nil
            }
        }
        return number.isEmpty && !text.isEmpty ? total : nil
    }

    /// An ISO 8601 date-time, with or without fractional seconds.
    static func iso8601(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
