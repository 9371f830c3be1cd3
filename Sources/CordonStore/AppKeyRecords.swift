import CordonSecrets
import Foundation
import GRDB

/// Each app's wrapped random key (docs/ARCHITECTURE.md, "Keys"): one `appKey` row per app,
/// `wrapped` sealed under a key derived from the master key (`KeyCustody.wrapAppKey`). Deleting
/// the row (`destroyAppKey`) crypto-erases the app's data: nothing derives the key again.
extension CordonDatabase {
    static func registerAppKeyMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("app-keys-v1-random") { db in
            try db.create(table: "appKey") { table in
                table.column("appId", .text).primaryKey()
                table.column("wrapped", .blob).notNull()
                table.column("createdAt", .double).notNull()
            }
        }
    }

    /// Every stored wrapped app key, by app id.
    public func wrappedAppKeys() throws -> [String: [UInt8]] {
        try writer.read { db in
            var keys: [String: [UInt8]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT appId, wrapped FROM appKey") {
                let wrapped: Data = row["wrapped"]
                keys[row["appId"]] = Array(wrapped)
            }
            return keys
        }
    }

    /// Durably stores `appId`'s first wrapped key; fails if the app has one already (a key handed
    /// out is never replaced).
    public func insertAppKey(appId: String, wrapped: [UInt8], now: Double) throws {
        try anchoredWrite(advance: false) { db in
            try db.execute(
                sql: "INSERT INTO appKey (appId, wrapped, createdAt) VALUES (?, ?, ?)",
                arguments: [appId, Data(wrapped), now])
        }
    }

    /// Crypto-erases `appId`'s key: deletes its wrapped key (overwritten in the file by
    /// `secure_delete`) and raises its legacy key generation in one transaction, then truncates
    /// the WAL so no copy of the wrapped key stays in the log. Returns the new generation.
    public func destroyAppKey(appId: String, now: Double) throws -> Int {
        // A wipe must never be undone: it raises the state anchor's counter, where one is.
        let generation = try anchoredWrite(advance: true) { db in
            try db.execute(sql: "DELETE FROM appKey WHERE appId = ?", arguments: [appId])
            return try Self.rotateAppGeneration(db, appId: appId, now: now)
        }
        try truncateWAL()
        return generation
    }

    /// Stores the migration of a container of derived app keys (`KeystoreFormat.derivedAppKeys`)
    /// in one transaction: the wrapped key of each app in `keys` that has none yet, and
    /// `keystore`, its master key re-wrapped in the current format. Then truncates the WAL, so no
    /// copy of the record of before stays in the log.
    /// `anchor`, when given, is established with them (a container made before anchors, too).
    public func storeAppKeyMigration(
        _ keys: [String: [UInt8]], keystore: WrappedKey, now: Double, anchor: StateAnchor? = nil
    ) throws {
        let store = { (db: Database) throws in
            for (appId, wrapped) in keys.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO appKey (appId, wrapped, createdAt) VALUES (?, ?, ?)",
                    arguments: [appId, Data(wrapped), now])
            }
            try Self.insertWrappedKey(keystore, now: now, db)
        }
        if let anchor {
            try establish(anchor, store)
        } else {
            try anchoredWrite(advance: false, store)
        }
        try truncateWAL()
    }

    /// Every app id the audit log names.
    public func auditedAppIds() throws -> Set<String> {
        try writer.read { db in
            Set(try String.fetchAll(db, sql: "SELECT DISTINCT appId FROM audit WHERE appId IS NOT NULL"))
        }
    }
}
