import Foundation
import GRDB

/// Each app's key generation (selective wipe, docs/ARCHITECTURE.md "Keys"): the app key is
/// derived with it, so raising it makes every key the app had before underivable.
extension CordonDatabase {
    static func registerAppGenerationMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v4-storage-app-generations") { db in
            try db.create(table: "appGeneration") { table in
                table.column("appId", .text).primaryKey()
                table.column("generation", .integer).notNull()
                table.column("wipedAt", .double).notNull()
            }
        }
    }

    /// The key generation of every app that was ever wiped on its own (others are at 0).
    public func appGenerations() throws -> [String: Int] {
        try writer.read { db in
            var generations: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT appId, generation FROM appGeneration") {
                generations[row["appId"]] = row["generation"]
            }
            return generations
        }
    }

    /// Durably raises `appId`'s key generation by one and returns the new one.
    public func rotateAppGeneration(appId: String, now: Double) throws -> Int {
        try anchoredWrite(advance: true) { db in
            try db.execute(
                sql: """
                    INSERT INTO appGeneration (appId, generation, wipedAt) VALUES (?, 1, ?)
                    ON CONFLICT(appId) DO UPDATE SET generation = generation + 1, wipedAt = excluded.wipedAt
                    """,
                arguments: [appId, now])
            return try Int.fetchOne(
                db, sql: "SELECT generation FROM appGeneration WHERE appId = ?", arguments: [appId]) ?? 1
        }
    }
}
