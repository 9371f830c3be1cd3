import Foundation
import GRDB
import Testing

@testable import CordonStore

/// The fleet ledger (`fleetCommand`) and floor (`fleetFloor`), and their migration onto a store
/// made before them.
@Suite struct FleetCommandRecordsTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-fleet-ledger-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    @Test func aRecordMovesFromExecutingToDoneAndSurvivesReopening() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.fleetCommands().isEmpty)
        #expect(try database.fleetFloor() == nil)
        var record = FleetCommandRecord(
            counter: 3, digest: [0xAB, 0xCD], kind: "wipeApp", app: "com.example.notes", state: .executing, at: 10)
        try database.recordFleetCommand(record)
        #expect(try CordonDatabase(path: path).fleetCommands() == [3: record])
        record.state = .done
        record.at = 11
        try database.recordFleetCommand(record)
        try database.recordFleetCommand(
            FleetCommandRecord(counter: 4, digest: [1], kind: "wipe", state: .refused, at: 12))
        let reopened = try CordonDatabase(path: path)
        #expect(try reopened.fleetCommands()[3] == record)
        #expect(try reopened.fleetCommands()[4]?.state == .refused)
        try reopened.raiseFleetFloor(to: 9, now: 1)
        try reopened.raiseFleetFloor(to: 5, now: 2)
        #expect(try reopened.fleetFloor() == 9, "a floor is never lowered")
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test func theMigrationAddsTheLedgerToAStoreMadeBeforeItKeepingEverythingElse() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let database = try CordonDatabase(path: path)
            try database.recordPolicySerial(name: "10-base.json", serial: 4, now: 1)
            // The store as the version before the fleet left it.
            try database.writer.write { db in
                try db.execute(sql: "DROP TABLE fleetCommand")
                try db.execute(sql: "DROP TABLE fleetFloor")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'fleet-v1-commands'")
            }
            #expect(try database.writer.read { db in try db.tableExists("fleetCommand") } == false)
        }
        let migrated = try CordonDatabase(path: path)
        #expect(try migrated.policySerials() == ["10-base.json": 4])
        #expect(try migrated.fleetCommands().isEmpty)
        try migrated.recordFleetCommand(FleetCommandRecord(counter: 1, digest: [1], kind: "lock", state: .done, at: 1))
        #expect(try migrated.fleetCommands().count == 1)
        #expect(try migrated.integrityCheck() == "ok")
    }
}
