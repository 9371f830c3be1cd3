import CordonStore
import Foundation
import Testing

/// The highest accepted serial of each signed policy file name.
@Suite struct PolicySerialsTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-serials-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    @Test func onlyAHigherSerialReplacesTheStoredOneAndItSurvivesReopening() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.policySerials().isEmpty)
        try database.recordPolicySerial(name: "10-base.json", serial: 42, now: 1)
        try database.recordPolicySerial(name: "10-base.json", serial: 41, now: 2)
        try database.recordPolicySerial(name: "20-apps.json", serial: 7, now: 3)
        #expect(try database.policySerials() == ["10-base.json": 42, "20-apps.json": 7])
        try database.recordPolicySerial(name: "10-base.json", serial: 43, now: 4)
        #expect(try CordonDatabase(path: path).policySerials() == ["10-base.json": 43, "20-apps.json": 7])
        #expect(try CordonDatabase(path: path).integrityCheck() == "ok")
    }
}
