import CordonProtocol
import Foundation
import GRDB

/// What to select from the audit log.
public struct AuditQuery: Sendable, Equatable {
    public var since: Double?
    public var appId: String?
    /// Only records with an id greater than this (for following).
    public var afterId: Int?
    public var limit: Int

    public init(since: Double? = nil, appId: String? = nil, afterId: Int? = nil, limit: Int = 1000) {
        self.since = since
        self.appId = appId
        self.afterId = afterId
        self.limit = limit
    }
}

/// How much audit history is kept.
public struct AuditRetention: Sendable, Equatable {
    public var maxRecords: Int
    public var maxAgeSeconds: Double

    public init(maxRecords: Int = 100_000, maxAgeSeconds: Double = 90 * 86400) {
        self.maxRecords = maxRecords
        self.maxAgeSeconds = maxAgeSeconds
    }
}

extension CordonDatabase {
    static func registerAuditMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v2-audit") { db in
            try db.create(table: "audit") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("time", .double).notNull().indexed()
                table.column("category", .text).notNull()
                table.column("appId", .text).indexed()
                table.column("action", .text)
                table.column("outcome", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("rules", .text).notNull()
            }
        }
        migrator.registerMigration("v3-audit-test-mode") { db in
            try db.alter(table: "audit") { table in
                table.add(column: "testMode", .boolean).notNull().defaults(to: false)
            }
        }
        // How far each agent run's journal of routine reads is in `audit`
        // (CordonServer's `AuditJournal`), so a journal replayed after a kill adds only what is not.
        migrator.registerMigration("v4-audit-journal") { db in
            try db.create(table: "auditJournal") { table in
                table.primaryKey("run", .text)
                table.column("committedUpTo", .integer).notNull()
            }
        }
    }

    /// How far each agent run's audit journal is stored: run id → the highest index committed.
    public func auditJournalCommitted() throws -> [String: Int] {
        try writer.read { db in
            var committed: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT run, committedUpTo FROM auditJournal") {
                committed[row["run"]] = row["committedUpTo"]
            }
            return committed
        }
    }

    /// Forgets the journal positions of `runs` (their journal is empty now).
    public func forgetAuditJournal(runs: [String]) throws {
        guard !runs.isEmpty else { return }
        try writer.write { db in
            for run in runs { try db.execute(sql: "DELETE FROM auditJournal WHERE run = ?", arguments: [run]) }
        }
    }

    /// Appends records and returns them with their ids. Rules are stored newline-separated.
    ///
    /// With `onDisk` false the transaction is committed with `synchronous = NORMAL`: in the WAL,
    /// so a killed agent loses nothing, and on the disk with the next commit that syncs (every
    /// other write) or the next checkpoint; only a power loss or a kernel crash before then loses
    /// it. The connection goes back to `synchronous = FULL` afterwards.
    @discardableResult
    ///
    /// With `journal`, the same transaction records that the run's journal is stored up to that
    /// index (`auditJournalCommitted()`).
    public func appendAudit(
        _ records: [AuditEntry], onDisk: Bool = true, journal: (run: String, upTo: Int)? = nil
    ) throws -> [AuditEntry] {
        guard !onDisk else {
            return try writer.write { db in
                try Self.markJournal(journal, db)
                return try Self.insert(records, db)
            }
        }
        return try writer.writeWithoutTransaction { db in
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            defer { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() }
            var stored: [AuditEntry] = []
            try db.inTransaction {
                try Self.markJournal(journal, db)
                stored = try Self.insert(records, db)
                return .commit
            }
            return stored
        }
    }

    private static func markJournal(_ journal: (run: String, upTo: Int)?, _ db: Database) throws {
        guard let journal else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO auditJournal (run, committedUpTo) VALUES (?, ?)
                ON CONFLICT(run) DO UPDATE SET committedUpTo = max(committedUpTo, excluded.committedUpTo)
                """
        ).execute(arguments: [journal.run, journal.upTo])
    }

    private static func insert(_ records: [AuditEntry], _ db: Database) throws -> [AuditEntry] {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO audit (time, category, appId, action, outcome, reason, rules, testMode)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
        return try records.map { record in
            try statement.execute(
                arguments: [
                    record.time, record.category.rawValue, record.appId, record.action, record.outcome,
                    record.reason, record.rules.joined(separator: "\n"), record.testMode ?? false,
                ])
            var stored = record
            stored.id = Int(db.lastInsertedRowID)
            return stored
        }
    }

    /// Records matching `query`, oldest first.
    public func queryAudit(_ query: AuditQuery) throws -> [AuditEntry] {
        try writer.read { db in
            var clauses: [String] = []
            var arguments: StatementArguments = []
            if let since = query.since {
                clauses.append("time >= ?")
                arguments += [since]
            }
            if let appId = query.appId {
                clauses.append("appId = ?")
                arguments += [appId]
            }
            if let afterId = query.afterId {
                clauses.append("id > ?")
                arguments += [afterId]
            }
            let filter = clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
            // The newest `limit` matching records, returned oldest first.
            let sql = """
                SELECT * FROM (SELECT * FROM audit \(filter) ORDER BY id DESC LIMIT ?) ORDER BY id ASC
                """
            arguments += [max(1, query.limit)]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.auditEntry)
        }
    }

    /// Deletes records older than the retention age and those more than `maxRecords` ids behind
    /// the newest; returns how many.
    ///
    /// Ids are given in order and never reused, and only this prune deletes, so the newest
    /// `maxRecords` ids hold at most `maxRecords` records (fewer only where the age limit took
    /// some of them). Finding that bound is one lookup of the largest id, where counting
    /// `maxRecords` rows back from it (`ORDER BY id DESC LIMIT 1 OFFSET maxRecords`) read the
    /// whole table at every prune once it was full (docs/PERFORMANCE.md, "The audit prune").
    @discardableResult
    public func pruneAudit(_ retention: AuditRetention, now: Double) throws -> Int {
        try writer.write { db in
            try db.execute(sql: "DELETE FROM audit WHERE time < ?", arguments: [now - retention.maxAgeSeconds])
            var deleted = db.changesCount
            try db.execute(
                sql: "DELETE FROM audit WHERE id <= (SELECT max(id) FROM audit) - ?",
                arguments: [retention.maxRecords])
            deleted += db.changesCount
            return deleted
        }
    }

    /// The number of audit records.
    public func auditCount() throws -> Int {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM audit") ?? 0 }
    }
}

extension CordonDatabase {
    /// A stored row as an entry (rules are stored newline-separated).
    static func auditEntry(_ row: Row) -> AuditEntry {
        let rules: String = row["rules"]
        let testMode: Bool = row["testMode"] ?? false
        return AuditEntry(
            id: row["id"], time: row["time"], category: AuditCategory(rawValue: row["category"]), appId: row["appId"],
            action: row["action"], outcome: row["outcome"], reason: row["reason"],
            rules: rules.isEmpty ? [] : rules.split(separator: "\n").map(String.init), testMode: testMode ? true : nil)
    }
}
