import CordonProtocol
import CordonStore
import Foundation

/// The audit records of routine reads, appended with one `write(2)` before their reply leaves and
/// stored in the database by a later group commit (docs/RELIABILITY.md, "Audit"): a record in
/// the kernel's page cache survives a killed agent, so killing the agent right after a read does
/// not erase the read; only a power loss or a kernel crash before the next sync can. At the next
/// start ``recover(path:database:)`` stores what the database does not have yet.
///
/// Each line is one JSON record with the agent run's id (`run`, random per start) and its index
/// in the run (`i`); a commit records in the same transaction how far the run's journal is
/// stored (`CordonDatabase.appendAudit(_:onDisk:journal:)`), so a replay never stores a record
/// twice. The file is emptied whenever everything in it is stored. Confined to the agent's loop.
final class AuditJournal {
    /// The journal's file name in the agent's data directory.
    static let fileName = "audit.journal"

    /// This run's id.
    let run: String
    private let descriptor: Int32
    /// The index of the last record appended.
    private(set) var lastIndex = 0

    /// Opens (creating, 0600) the journal at `path`; nil when it cannot be opened.
    init?(path: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        run = (0..<16).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
    }

    deinit { close(descriptor) }

    /// Appends `records` in one write; returns the index of the last one, nil when the write
    /// failed (the caller then stores them before its reply).
    func append(_ records: [AuditEntry]) -> Int? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * records.count)
        var index = lastIndex
        for record in records {
            index += 1
            Self.write(record, run: run, index: index, to: &bytes)
        }
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            // A short write leaves a torn line; recovery skips what does not parse.
            if written > 0 { _ = Foundation.write(descriptor, [UInt8(ascii: "\n")], 1) }
            return nil
        }
        lastIndex = index
        return index
    }

    /// Empties the file: everything appended is stored.
    func truncate() {
        _ = ftruncate(descriptor, 0)
    }

    private static func write(_ record: AuditEntry, run: String, index: Int, to bytes: inout [UInt8]) {
        var line = JSONWriter(capacity: 256)
        line.beginObject()
        line.member("run", run)
        line.member("i", index)
        try? line.member("time", record.time)
        line.member("category", record.category.rawValue)
        line.member("appId", record.appId)
        line.member("action", record.action)
        line.member("outcome", record.outcome)
        line.member("reason", record.reason)
        line.member("rules", record.rules)
        line.member("testMode", record.testMode)
        line.endObject()
        bytes += line.bytes
        bytes.append(UInt8(ascii: "\n"))
    }

    /// One journal line.
    struct Line: Decodable {
        var run: String
        var i: Int
        var time: Double
        var category: String
        var appId: String?
        var action: String?
        var outcome: String
        var reason: String
        var rules: [String]?
        var testMode: Bool?

        var entry: AuditEntry {
            AuditEntry(
                time: time, category: AuditCategory(rawValue: category), appId: appId, action: action,
                outcome: outcome, reason: reason, rules: rules ?? [], testMode: testMode)
        }
    }

    /// Stores the records of the journal at `path` that `database` does not have (a killed agent's
    /// last routine reads), synced, then empties the file and forgets the runs' positions.
    /// Returns how many were stored; a line that does not parse (torn by a crash mid-write) is
    /// skipped.
    @discardableResult
    static func recover(path: String, database: CordonDatabase) throws -> Int {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return 0 }
        let committed = try database.auditJournalCommitted()
        var missing: [String: [Line]] = [:]
        let decoder = JSONDecoder()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let parsed = try? decoder.decode(Line.self, from: Data(line)) else { continue }
            if parsed.i > committed[parsed.run, default: 0] { missing[parsed.run, default: []].append(parsed) }
        }
        var stored = 0
        for (run, lines) in missing {
            let upTo = lines.map(\.i).max() ?? 0
            _ = try database.appendAudit(lines.map(\.entry), onDisk: true, journal: (run, upTo))
            stored += lines.count
        }
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
        try database.forgetAuditJournal(runs: Array(Set(committed.keys).union(missing.keys)))
        return stored
    }
}
