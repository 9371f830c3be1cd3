import Foundation
import GRDB

/// The highest serial of a signed admin policy file accepted for each file name, so an older
/// signed file put back in place (a rollback) is refused, across restarts too
/// (docs/ARCHITECTURE.md, "A policy file, from disk to a decision").
extension CordonDatabase {
    static func registerPolicySerialMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v3-policy-serials") { db in
            try db.create(table: "policySerial") { table in
                table.column("name", .text).primaryKey()
                table.column("serial", .integer).notNull()
                table.column("acceptedAt", .double).notNull()
            }
        }
    }

    /// The highest accepted serial of every file name.
    public func policySerials() throws -> [String: Int] {
        try writer.read { db in
            var serials: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, serial FROM policySerial") {
                serials[row["name"]] = row["serial"]
            }
            return serials
        }
    }

    /// Records that `serial` was accepted for the file `name`; a lower serial than the one
    /// stored changes nothing.
    public func recordPolicySerial(name: String, serial: Int, now: Double) throws {
        if try policySerials()[name].map({ $0 >= serial }) == true { return }
        try anchoredWrite(advance: true) { db in
            try db.execute(
                sql: """
                    INSERT INTO policySerial (name, serial, acceptedAt) VALUES (?, ?, ?)
                    ON CONFLICT(name) DO UPDATE SET serial = excluded.serial, acceptedAt = excluded.acceptedAt
                    WHERE excluded.serial > policySerial.serial
                    """,
                arguments: [name, serial, now])
        }
    }
}
