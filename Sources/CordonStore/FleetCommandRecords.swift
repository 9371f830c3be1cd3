import Foundation
import GRDB

/// One fleet command as the agent's ledger remembers it (docs/ARCHITECTURE.md, "Fleet commands in
/// the agent"): its counter, the SHA-256 of the command, its kind, and where it stands.
public struct FleetCommandRecord: Sendable, Equatable {
    /// Where a command stands.
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// Committed before the agent acts: a command left so by a kill is performed again at start.
        case executing
        /// Performed.
        case done
        /// Refused (a replay, another device's), audited once.
        case refused
    }

    public var counter: Int
    public var digest: [UInt8]
    public var kind: String
    /// The app a `wipeApp` erases: a command left `executing` is performed again from the ledger
    /// alone when its file is gone.
    public var app: String?
    public var state: State
    /// When the state was recorded (seconds since 1970).
    public var at: Double

    public init(counter: Int, digest: [UInt8], kind: String, app: String? = nil, state: State, at: Double) {
        self.counter = counter
        self.digest = digest
        self.kind = kind
        self.app = app
        self.state = state
        self.at = at
    }
}

/// The ledger of fleet commands (`fleetCommand`) and the floor recorded when the container was made
/// (`fleetFloor`): each command is executed once per container, in counter order.
extension CordonDatabase {
    static func registerFleetMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("fleet-v1-commands") { db in
            try db.create(table: "fleetCommand") { table in
                table.column("counter", .integer).primaryKey()
                table.column("digest", .blob).notNull()
                table.column("kind", .text).notNull()
                table.column("app", .text)
                table.column("state", .text).notNull()
                    .check(sql: "state IN ('executing', 'done', 'refused')")
                table.column("at", .double).notNull()
            }
            try db.create(table: "fleetFloor") { table in
                table.column("id", .integer).primaryKey().check(sql: "id = 1")
                table.column("counter", .integer).notNull()
                table.column("at", .double).notNull()
            }
        }
    }

    /// Every recorded fleet command, by counter.
    public func fleetCommands() throws -> [Int: FleetCommandRecord] {
        try writer.read { db in
            var records: [Int: FleetCommandRecord] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT counter, digest, kind, app, state, at FROM fleetCommand") {
                let counter: Int = row["counter"]
                let data: Data = row["digest"]
                records[counter] = FleetCommandRecord(
                    counter: counter, digest: Array(data), kind: row["kind"], app: row["app"],
                    state: FleetCommandRecord.State(rawValue: row["state"]) ?? .executing, at: row["at"])
            }
            return records
        }
    }

    /// Records (or updates) a fleet command's state, durably, before the caller goes on.
    public func recordFleetCommand(_ record: FleetCommandRecord) throws {
        try anchoredWrite(advance: true) { db in
            try db.execute(
                sql: """
                    INSERT INTO fleetCommand (counter, digest, kind, app, state, at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(counter) DO UPDATE SET digest = excluded.digest, kind = excluded.kind,
                    app = excluded.app, state = excluded.state, at = excluded.at
                    """,
                arguments: [
                    record.counter, Data(record.digest), record.kind, record.app, record.state.rawValue, record.at,
                ])
        }
    }

    /// The floor recorded when the container was made: commands at or below it predate the
    /// container and are never executed by it.
    public func fleetFloor() throws -> Int? {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT counter FROM fleetFloor WHERE id = 1") }
    }

    /// Raises the floor to `counter` (a lower one changes nothing).
    public func raiseFleetFloor(to counter: Int, now: Double) throws {
        try anchoredWrite(advance: true) { db in
            try db.execute(
                sql: """
                    INSERT INTO fleetFloor (id, counter, at) VALUES (1, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET counter = excluded.counter, at = excluded.at
                    WHERE excluded.counter > fleetFloor.counter
                    """,
                arguments: [counter, now])
        }
    }
}
