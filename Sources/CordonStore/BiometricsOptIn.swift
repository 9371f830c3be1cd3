import GRDB

extension CordonDatabase {
    /// The user's fingerprint-unlock opt-in (`cordon biometrics on|off`): one row.
    static func registerBiometricsMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("passcode-biometrics-opt-in") { db in
            try db.create(table: "biometrics") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("optedIn", .boolean).notNull()
            }
        }
    }

    /// Whether the user opted into fingerprint unlock (false when never set).
    public func loadBiometricsOptIn() throws -> Bool {
        try writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT optedIn FROM biometrics WHERE id = 1") ?? false
        }
    }

    /// Stores the user's fingerprint-unlock opt-in.
    public func saveBiometricsOptIn(_ optedIn: Bool) throws {
        try writer.write { db in
            try db.execute(sql: "INSERT INTO biometrics (id, optedIn) VALUES (1, ?)", arguments: [optedIn])
        }
    }
}
