import Foundation
import GRDB

/// Each app's legacy key generation (docs/ARCHITECTURE.md "Keys"): before random app keys, the
/// app key was derived with it. Read only to migrate a container of derived app keys (the key of
/// its current generation is wrapped); a selective wipe still raises it, so even that migration
/// never derives a wiped generation's key again while the row stays.
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
        try anchoredWrite(advance: true) { db in try Self.rotateAppGeneration(db, appId: appId, now: now) }
    }

    /// Raises `appId`'s key generation by one within the caller's transaction.
    static func rotateAppGeneration(_ db: Database, appId: String, now: Double) throws -> Int {
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
