import CordonProtocol
import CordonStore
import Foundation
import Testing

@Suite struct AuditLogTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-audit-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    func record(
        time: Double, appId: String? = "org.example.notes", action: String? = "pasteboard.paste",
        outcome: String = "allow"
    ) -> AuditEntry {
        AuditEntry(
            time: time, category: .decision, appId: appId, action: action, outcome: outcome,
            reason: "rule at \(time)", rules: ["/etc/cordon/policy.d/10-admin.json#/apps/0"])
    }

    /// Appends one record per time, alternating between two apps; returns the stored records.
    func fill(_ database: CordonDatabase, times: ClosedRange<Int>) throws -> [AuditEntry] {
        try database.appendAudit(
            times.map { record(time: Double($0), appId: $0.isMultiple(of: 2) ? "org.example.even" : "org.example.odd") }
        )
    }

    @Test func appendReturnsTheRecordsWithIncreasingIds() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.auditCount() == 0)
        #expect(try database.queryAudit(AuditQuery()).isEmpty)

        let input = [record(time: 10), record(time: 11, appId: nil, action: nil, outcome: "rejected")]
        let stored = try database.appendAudit(input)
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { $0.id > 0 })
        #expect(stored[0].id < stored[1].id)
        // Everything but the id is what was given.
        for (given, kept) in zip(input, stored) {
            var withId = given
            withId.id = kept.id
            #expect(kept == withId)
        }

        let more = try database.appendAudit([record(time: 12)])
        #expect(more.map(\.id) == [stored[1].id + 1])
        #expect(try database.appendAudit([]).isEmpty)
        #expect(try database.auditCount() == 3)
        #expect(try database.queryAudit(AuditQuery()) == stored + more, "all fields, nil ones too, round-trip")
    }

    /// A routine read's record, committed without a sync of its own, is stored like any other,
    /// in order with the synced ones, and there for the next process that opens the database.
    @Test func recordsCommittedWithoutASyncAreStoredInOrder() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var stored: [AuditEntry] = []
        do {
            let database = try CordonDatabase(path: path)
            stored += try database.appendAudit([record(time: 1)])
            stored += try database.appendAudit([record(time: 2), record(time: 3)], onDisk: false)
            stored += try database.appendAudit([record(time: 4)])
            stored += try database.appendAudit([record(time: 5)], onDisk: false)
        }
        #expect(stored.map(\.id) == Array(stored[0].id..<(stored[0].id + 5)))
        let reopened = try CordonDatabase(path: path)
        #expect(try reopened.queryAudit(AuditQuery()) == stored)
    }

    @Test func queryIsOldestFirstAndFiltersBySince() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        #expect(try database.queryAudit(AuditQuery()) == stored)
        #expect(try database.queryAudit(AuditQuery(since: 7)) == Array(stored[6...]), "since is inclusive")
        #expect(try database.queryAudit(AuditQuery(since: 7.5)) == Array(stored[7...]))
        #expect(try database.queryAudit(AuditQuery(since: 11)).isEmpty)
        #expect(try database.queryAudit(AuditQuery(since: 0)) == stored)
    }

    @Test func queryFiltersByApp() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        try database.appendAudit([record(time: 11, appId: nil)])
        let even = try database.queryAudit(AuditQuery(appId: "org.example.even"))
        #expect(even == stored.filter { $0.appId == "org.example.even" })
        #expect(even.map(\.time) == [2, 4, 6, 8, 10])
        #expect(try database.queryAudit(AuditQuery(appId: "org.example.unknown")).isEmpty)
        #expect(try database.queryAudit(AuditQuery()).count == 11, "no appId: every record, app or not")
    }

    @Test func queryFollowsAfterAnId() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...5)
        #expect(try database.queryAudit(AuditQuery(afterId: stored[2].id)) == Array(stored[3...]))
        #expect(try database.queryAudit(AuditQuery(afterId: stored[4].id)).isEmpty)
        #expect(try database.queryAudit(AuditQuery(afterId: 0)) == stored)

        // Following: what came after the last id seen, and only that.
        let later = try database.appendAudit([record(time: 6), record(time: 7)])
        #expect(try database.queryAudit(AuditQuery(afterId: stored[4].id)) == later)
    }

    @Test func limitReturnsTheNewestMatchingRecordsOldestFirst() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        #expect(try database.queryAudit(AuditQuery(limit: 3)) == Array(stored[7...]))
        #expect(try database.queryAudit(AuditQuery(limit: 1)) == [stored[9]])
        #expect(try database.queryAudit(AuditQuery(limit: 100)) == stored)
        #expect(try database.queryAudit(AuditQuery(limit: 10)) == stored)
    }

    @Test func filtersCombineAndTheLimitAppliesAfterThem() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        let odd = stored.filter { $0.appId == "org.example.odd" }  // times 1, 3, 5, 7, 9
        #expect(try database.queryAudit(AuditQuery(appId: "org.example.odd", limit: 2)) == Array(odd[3...]))
        #expect(
            try database.queryAudit(AuditQuery(since: 3, appId: "org.example.odd", afterId: stored[3].id, limit: 10))
                == odd.filter { $0.time >= 5 })
        #expect(
            try database.queryAudit(AuditQuery(since: 2, appId: "org.example.odd", limit: 1)).map(\.time) == [9])
    }

    @Test func pruneRemovesRecordsOlderThanTheMaximumAge() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        // now 100, age 94: records before time 6 go.
        let deleted = try database.pruneAudit(AuditRetention(maxRecords: 1_000, maxAgeSeconds: 94), now: 100)
        #expect(deleted == 5)
        #expect(try database.auditCount() == 5)
        #expect(try database.queryAudit(AuditQuery()) == Array(stored[5...]))
        #expect(try database.pruneAudit(AuditRetention(maxRecords: 1_000, maxAgeSeconds: 94), now: 100) == 0)
    }

    @Test func pruneKeepsTheNewestMaximumNumberOfRecords() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        let retention = AuditRetention(maxRecords: 4, maxAgeSeconds: 1_000_000)
        #expect(try database.pruneAudit(retention, now: 10) == 6)
        #expect(try database.auditCount() == 4)
        #expect(try database.queryAudit(AuditQuery()) == Array(stored[6...]))
        #expect(try database.pruneAudit(retention, now: 10) == 0, "already within the limit")

        // Ids keep increasing after a prune: followers never see an id twice.
        let next = try database.appendAudit([record(time: 11)])
        #expect(next.map(\.id) == [stored[9].id + 1])
    }

    @Test func pruneAppliesAgeAndCountTogether() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let stored = try fill(database, times: 1...10)
        // Age drops times 1...3, then the count keeps the newest 5 of what is left.
        #expect(try database.pruneAudit(AuditRetention(maxRecords: 5, maxAgeSeconds: 16), now: 20) == 5)
        #expect(try database.queryAudit(AuditQuery()) == Array(stored[5...]))
    }

    @Test func pruneCountsTheNewestIdsSoAnAgedOutRecordAmongThemIsNotReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        // The clock went back once: the eighth record is older than the age limit, its neighbours not.
        let stored = try database.appendAudit(
            (1...10).map { record(time: $0 == 8 ? 1 : 100 + Double($0)) })
        #expect(try database.pruneAudit(AuditRetention(maxRecords: 4, maxAgeSeconds: 50), now: 150) == 7)
        // The newest four ids are 7...10; the eighth aged out, so three records remain, never an older one.
        #expect(try database.queryAudit(AuditQuery()) == [stored[6], stored[8], stored[9]])
        #expect(try database.pruneAudit(AuditRetention(maxRecords: 4, maxAgeSeconds: 50), now: 150) == 0)
    }

    @Test func pruneOfAnEmptyLogDeletesNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.pruneAudit(AuditRetention(), now: 1_000_000) == 0)
        #expect(try database.pruneAudit(AuditRetention(maxRecords: 0, maxAgeSeconds: 0), now: 0) == 0)
    }

    @Test func defaultRetentionKeepsRecentRecords() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let now = 1_700_000_000.0
        try database.appendAudit([record(time: now - 91 * 86400), record(time: now - 89 * 86400), record(time: now)])
        #expect(try database.pruneAudit(AuditRetention(), now: now) == 1)
        #expect(try database.auditCount() == 2)
    }

    @Test func recordsSurviveReopeningTheDatabase() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stored = try fill(CordonDatabase(path: path), times: 1...3)
        let reopened = try CordonDatabase(path: path)
        #expect(try reopened.auditCount() == 3)
        #expect(try reopened.queryAudit(AuditQuery()) == stored)
        let more = try reopened.appendAudit([record(time: 4)])
        #expect(more.map(\.id) == [stored[2].id + 1])
        #expect(try CordonDatabase(path: path, readOnly: true).queryAudit(AuditQuery()) == stored + more)
    }

    @Test func auditCountCountsEveryRecord() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.auditCount() == 0)
        try database.appendAudit([record(time: 1)])
        #expect(try database.auditCount() == 1)
        _ = try fill(database, times: 1...20)
        #expect(try database.auditCount() == 21)
        try database.pruneAudit(AuditRetention(maxRecords: 7), now: 20)
        #expect(try database.auditCount() == 7)
    }
}
