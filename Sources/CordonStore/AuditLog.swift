import Foundation
import GRDB

/// One audited event: a policy decision, an enforcement, a rejected policy file.
public struct AuditRecord: Sendable, Equatable, Codable {
    /// Row id, increasing; 0 before insertion.
    public var id: Int64
    /// Unix seconds.
    public var time: Double
    /// e.g. `decision`, `policy`, `enforcement`.
    public var category: String
    /// The app concerned, if any.
    public var appId: String?
    /// e.g. `pasteboard.paste`.
    public var action: String?
    /// `allow`, `deny`, `applied`, `rejected`, ...
    public var outcome: String
    public var reason: String
    /// The rules that decided, as `FILE#POINTER`, newline-separated.
    public var rules: String

    public init(
        id: Int64 = 0, time: Double, category: String, appId: String?, action: String?, outcome: String,
        reason: String, rules: String
    ) {
        self.id = id
        self.time = time
        self.category = category
        self.appId = appId
        self.action = action
        self.outcome = outcome
        self.reason = reason
        self.rules = rules
    }
}

/// What to select from the audit log.
public struct AuditQuery: Sendable, Equatable {
    public var since: Double?
    public var appId: String?
    /// Only records with an id greater than this (for following).
    public var afterId: Int64?
    public var limit: Int

    public init(since: Double? = nil, appId: String? = nil, afterId: Int64? = nil, limit: Int = 1000) {
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
    }

    /// Appends records and returns them with their ids.
    @discardableResult
    public func appendAudit(_ records: [AuditRecord]) throws -> [AuditRecord] {
        try writer.write { db in
            try records.map { record in
                try db.execute(
                    sql: """
                        INSERT INTO audit (time, category, appId, action, outcome, reason, rules)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        record.time, record.category, record.appId, record.action, record.outcome, record.reason,
                        record.rules,
                    ])
                var stored = record
                stored.id = db.lastInsertedRowID
                return stored
            }
        }
    }

    /// Records matching `query`, oldest first.
    public func queryAudit(_ query: AuditQuery) throws -> [AuditRecord] {
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
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                AuditRecord(
                    id: row["id"], time: row["time"], category: row["category"], appId: row["appId"],
                    action: row["action"], outcome: row["outcome"], reason: row["reason"], rules: row["rules"])
            }
        }
    }

    /// Deletes records older than the retention age and beyond the record limit; returns how many.
    @discardableResult
    public func pruneAudit(_ retention: AuditRetention, now: Double) throws -> Int {
        try writer.write { db in
            try db.execute(sql: "DELETE FROM audit WHERE time < ?", arguments: [now - retention.maxAgeSeconds])
            var deleted = db.changesCount
            try db.execute(
                sql: "DELETE FROM audit WHERE id <= (SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET ?)",
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
