import Foundation
import GRDB

/// The device's posture-report signing key as the `postureDeviceKey` table holds it (one row;
/// docs/ARCHITECTURE.md, "Posture"): the Ed25519 public key in the clear, the private key only as a
/// `RecordSealer` record under the master key's `["posture", "device-key"]` purpose key, so it opens
/// only while the key is held and is gone with the master key after a wipe.
public struct StoredDeviceKey: Sendable, Equatable {
    /// The raw 32-byte Ed25519 public key.
    public var publicKey: [UInt8]
    /// The sealed 32-byte private key.
    public var sealed: [UInt8]
    /// Unix time it was made.
    public var createdAt: Double

    public init(publicKey: [UInt8], sealed: [UInt8], createdAt: Double) {
        self.publicKey = publicKey
        self.sealed = sealed
        self.createdAt = createdAt
    }

    /// The purpose of the key that seals it (`KeyCustody.purposeKey`), and its slot.
    public static let purpose = ["posture", "device-key"]
    public static let slot = ["posture", "device-key", "ed25519"]
}

extension CordonDatabase {
    static func registerDeviceKeyMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("posture-v1-device-key") { db in
            try db.create(table: "postureDeviceKey") { table in
                table.column("id", .integer).primaryKey(onConflict: .abort)
                table.column("publicKey", .blob).notNull()
                table.column("sealed", .blob).notNull()
                table.column("createdAt", .double).notNull()
            }
        }
    }

    /// The device key, if one was made.
    public func deviceKey() throws -> StoredDeviceKey? {
        try writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM postureDeviceKey WHERE id = 1") else {
                return nil
            }
            let publicKey: Data = row["publicKey"]
            let sealed: Data = row["sealed"]
            return StoredDeviceKey(publicKey: Array(publicKey), sealed: Array(sealed), createdAt: row["createdAt"])
        }
    }

    /// Stores `key` unless one exists; returns the one stored (the first wins, so two callers
    /// making a key at once end up signing with the same one).
    public func storeDeviceKeyIfAbsent(_ key: StoredDeviceKey) throws -> StoredDeviceKey {
        try writer.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO postureDeviceKey (id, publicKey, sealed, createdAt) VALUES (1, ?, ?, ?)",
                arguments: [Data(key.publicKey), Data(key.sealed), key.createdAt])
            let row = try Row.fetchOne(db, sql: "SELECT * FROM postureDeviceKey WHERE id = 1")
            guard let row else { return key }
            let publicKey: Data = row["publicKey"]
            let sealed: Data = row["sealed"]
            return StoredDeviceKey(publicKey: Array(publicKey), sealed: Array(sealed), createdAt: row["createdAt"])
        }
    }
}
