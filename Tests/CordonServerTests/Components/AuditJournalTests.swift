import CordonProtocol
import CordonStore
import Foundation
import Testing

@testable import CordonServer

/// The journal of routine reads' audit records (issue #31): what a killed agent appended and had
/// not committed is stored at the next start, exactly once; what it had committed is not stored
/// again; a line torn by a crash mid-write is skipped; the file is emptied.
@Suite struct AuditJournalTests {
    static func reads(_ count: Int, from start: Int = 0) -> [AuditEntry] {
        (start..<(start + count)).map {
            AuditEntry(
                time: Double($0), category: "tokens", appId: "com.example.notes", action: "tokens.code",
                outcome: "allow", reason: "serial \($0)", rules: ["/etc/cordon/policy.d/1.json#/tokens"])
        }
    }

    /// A fresh directory, removed when `body` returns.
    static func inDirectory(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "cordon-journal-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    static func stored(_ database: CordonDatabase) throws -> [String] {
        try database.queryAudit(AuditQuery(limit: 1000)).map(\.reason)
    }

    @Test func whatWasNotCommittedIsStoredOnceAtTheNextStart() throws {
        try Self.inDirectory { directory in
            let database = try CordonDatabase(path: directory + "/cordon.sqlite")
            let path = directory + "/" + AuditJournal.fileName
            let journal = try #require(AuditJournal(path: path))
            #expect(journal.append(Self.reads(3)) == 3)
            #expect(journal.append(Self.reads(2, from: 3)) == 5)
            // The agent committed the first three (recording how far), then was killed.
            _ = try database.appendAudit(Self.reads(3), onDisk: false, journal: (journal.run, 3))
            // A crash in the middle of a write left a torn line.
            let torn = try #require(FileHandle(forWritingAtPath: path))
            torn.seekToEndOfFile()
            torn.write(Data(#"{"run":"\#(journal.run)","i":6,"time":1"#.utf8))
            try torn.close()

            #expect(try AuditJournal.recover(path: path, database: database) == 2)
            #expect(try Self.stored(database) == (0..<5).map { "serial \($0)" })
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
            #expect(try database.auditJournalCommitted().isEmpty)
            let rules = try database.queryAudit(AuditQuery(limit: 1000)).last?.rules
            #expect(rules == ["/etc/cordon/policy.d/1.json#/tokens"])
            // A second start finds nothing to store.
            #expect(try AuditJournal.recover(path: path, database: database) == 0)
            #expect(try Self.stored(database).count == 5)
        }
    }

    @Test func aMissingOrEmptyJournalStoresNothing() throws {
        try Self.inDirectory { directory in
            let database = try CordonDatabase(path: directory + "/cordon.sqlite")
            let path = directory + "/" + AuditJournal.fileName
            #expect(try AuditJournal.recover(path: path, database: database) == 0)
            let journal = try #require(AuditJournal(path: path))
            _ = journal.append(Self.reads(1))
            journal.truncate()
            #expect(try AuditJournal.recover(path: path, database: database) == 0)
            #expect(try Self.stored(database).isEmpty)
        }
    }
}
