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
            journal.stored(upTo: 1)
            journal.emptyIfStored()
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
            #expect(try AuditJournal.recover(path: path, database: database) == 0)
            #expect(try Self.stored(database).isEmpty)
        }
    }

    /// Appends `reads` one at a time until the journal refuses one; returns how many it took.
    static func fill(_ journal: AuditJournal, with reads: ArraySlice<AuditEntry>) -> Int {
        reads.prefix { journal.append([$0]) != nil }.count
    }

    static func lines(_ path: String) throws -> [Data] {
        try Data(contentsOf: URL(fileURLWithPath: path)).split { $0 == UInt8(ascii: "\n") || $0 == 0 }
    }

    /// A database and a journal (halves of `halfSize`) in a fresh directory.
    static func withJournal(
        halfSize: Int = AuditJournal.defaultHalfSize,
        _ body: (CordonDatabase, String, AuditJournal) throws -> Void
    ) throws {
        try inDirectory { directory in
            let database = try CordonDatabase(path: directory + "/cordon.sqlite")
            let path = directory + "/" + AuditJournal.fileName
            try body(database, path, try #require(AuditJournal(path: path, halfSize: halfSize)))
        }
    }

    /// What the agent's group commit does: `reads` stored with the journal's position up to
    /// `index`, then the journal told.
    static func commit(
        _ reads: ArraySlice<AuditEntry>, upTo index: Int, in database: CordonDatabase, journal: AuditJournal
    ) throws {
        _ = try database.appendAudit(Array(reads), onDisk: false, journal: (journal.run, index))
        journal.stored(upTo: index)
    }

    @Test func aHalfIsWrittenAgainOnlyOnceEverythingInItIsStored() throws {
        // Halves of 1 KiB: a handful of records each.
        try Self.withJournal(halfSize: 1024) { database, path, journal in
            let reads = Self.reads(100)
            let taken = Self.fill(journal, with: reads[...])
            #expect(taken > 4 && taken < 20, "both halves full and nothing stored: the journal refuses")
            #expect(journal.lastIndex == taken)
            // The first record stored: the first half still holds unstored ones.
            try Self.commit(reads[0..<1], upTo: 1, in: database, journal: journal)
            #expect(journal.append([reads[taken]]) == nil)
            // All but the last stored: the first half is free, the second (the last record) not.
            try Self.commit(reads[1..<(taken - 1)], upTo: taken - 1, in: database, journal: journal)
            let more = Self.fill(journal, with: reads[taken...])
            #expect(more > 1 && more < taken, "the first half again, until it is full")
            // Killed here: the second half's last record and the first half's new ones are stored,
            // in the run's order, once.
            #expect(try AuditJournal.recover(path: path, database: database) == 1 + more)
            #expect(try Self.stored(database) == reads.prefix(taken + more).map(\.reason))
        }
    }

    @Test func caughtUpTheJournalIsZeroedAndWrittenFromTheStart() throws {
        try Self.withJournal { database, path, journal in
            let reads = Self.reads(5)
            #expect(journal.append(Array(reads[0..<3])) == 3)
            try Self.commit(reads[0..<3], upTo: 3, in: database, journal: journal)
            #expect(try Self.lines(path).isEmpty, "stored: nothing of it is left")
            #expect(journal.append([reads[3]]) == 4)
            let lines = try Self.lines(path)
            #expect(lines.count == 1)
            #expect(AuditJournal.position(of: try #require(lines.first))?.index == 4)
            #expect(AuditJournal.position(of: try #require(lines.first))?.run == journal.run)
            #expect(try AuditJournal.recover(path: path, database: database) == 1)
            #expect(try Self.stored(database) == reads.prefix(4).map(\.reason))
        }
    }

    /// A kill in the middle of a copy leaves a torn line. Written over stored lines of the same
    /// shape, its end would have been theirs: a whole record nobody made (the torn read's run
    /// and index with another read's fields), which the zeroing before reuse rules out.
    @Test func aLineTornByAKillIsSkippedAndNeverCompletedByAnOlderOne() throws {
        try Self.withJournal { database, path, journal in
            let reads = Self.reads(5)
            #expect(journal.append(Array(reads[0..<3])) == 3)
            let second = try Self.lines(path)[1]
            try Self.commit(reads[0..<3], upTo: 3, in: database, journal: journal)
            #expect(journal.append([reads[3]]) == 4)
            // The fifth read's line, torn after its time, where the second line used to start.
            let torn = String(decoding: second, as: UTF8.self)
                .replacingOccurrences(of: #""i":2,"#, with: #""i":5,"#)
                .components(separatedBy: #","category""#)[0]
            let offset = try Self.lines(path)[0].count + 1
            #expect(offset == second.count + 1, "the torn line starts where the second one did")
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seek(toOffset: UInt64(offset))
            handle.write(Data(torn.utf8))
            try handle.close()

            #expect(try AuditJournal.recover(path: path, database: database) == 1)
            #expect(try Self.stored(database) == reads.prefix(4).map(\.reason))
        }
    }

    @Test func positionReadsOnlyTheLayoutTheJournalWrites() {
        #expect(AuditJournal.position(of: Data(#"{"run":"ab","i":12,"time":1}"#.utf8))! == ("ab", 12))
        #expect(AuditJournal.position(of: Data(#"{"run":"ab","i":,"time":1}"#.utf8)) == nil)
        #expect(AuditJournal.position(of: Data(#"{"run":"ab","i":12"#.utf8)) == nil)
        #expect(AuditJournal.position(of: Data(#"{"i":12,"run":"ab"}"#.utf8)) == nil)
        #expect(AuditJournal.position(of: Data(#"{"run":"ab","i":99999999999999999999999,"#.utf8)) == nil)
        #expect(AuditJournal.position(of: Data()) == nil)
    }

    @Test func aJournalNotYetRecoveredIsNeverWrittenOver() throws {
        try Self.inDirectory { directory in
            let path = directory + "/" + AuditJournal.fileName
            let killed = try #require(AuditJournal(path: path))
            #expect(killed.append(Self.reads(1)) == 1)
            #expect(AuditJournal(path: path) == nil, "the next agent recovers it first")
        }
    }

    /// A journal the disk has no room for is refused at the allocation (the reads then wait for
    /// their commit), never met as a `SIGBUS` while copying into the mapping. On a 1 MiB tmpfs:
    /// halves of 1 MiB do not fit, halves of 128 KiB do, and filling the rest of the disk after
    /// the allocation does not stop the appends.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskRefusesTheJournalAtItsAllocation() throws {
        try Self.inDirectory { directory in
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", directory]
            try mount.run()
            mount.waitUntilExit()
            try #require(mount.terminationStatus == 0, "mount -t tmpfs failed")
            defer { _ = umount2(directory, Int32(MNT_DETACH)) }

            let tooLarge = try #require(AuditJournal(path: directory + "/large.journal", halfSize: 1 << 20))
            #expect(tooLarge.append(Self.reads(1)) == nil, "no room for the file: refused")
            #expect(tooLarge.append(Self.reads(1)) == nil)

            let path = directory + "/" + AuditJournal.fileName
            let journal = try #require(AuditJournal(path: path, halfSize: 128 << 10))
            #expect(journal.append(Self.reads(1)) == 1)
            // The rest of the disk filled: the journal's blocks are its own.
            #expect(FileManager.default.createFile(atPath: directory + "/filler", contents: nil))
            let filler = try #require(FileHandle(forWritingAtPath: directory + "/filler"))
            let chunk = Data(repeating: 0x41, count: 64 << 10)
            while (try? filler.write(contentsOf: chunk)) != nil {}
            try? filler.close()
            let reads = Self.reads(400, from: 1)
            #expect(Self.fill(journal, with: reads[...]) > 300, "appends go on into the allocated halves")
        }
    }
}
