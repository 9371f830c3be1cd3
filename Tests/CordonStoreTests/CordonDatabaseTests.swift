import CordonSecrets
import CordonStore
import Foundation
import Testing

@Suite struct CordonDatabaseTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-store-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    func sampleKey() -> WrappedKey {
        WrappedKey(
            kdf: KDFParameters(rounds: 1 << 15, blockSize: 8, parallelism: 2, salt: Array(0..<16)),
            sealed: Array(repeating: 0xAB, count: 60))
    }

    @Test func freshDatabaseIsEmpty() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.loadWrappedKey() == nil)
        let attempts = try database.loadAttempts()
        #expect(attempts.count == 0)
        #expect(attempts.lastFailureAt == nil)
        #expect(try database.integrityCheck() == "ok")
    }

    @Test func wrappedKeyRoundTripsWithItsParameters() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = sampleKey()
        try CordonDatabase(path: path).saveWrappedKey(key, now: 1000)
        // A new connection sees exactly what was stored.
        #expect(try CordonDatabase(path: path).loadWrappedKey() == key)
        var replacement = key
        replacement.sealed = Array(repeating: 0xCD, count: 60)
        try CordonDatabase(path: path).saveWrappedKey(replacement, now: 2000)
        #expect(try CordonDatabase(path: path).loadWrappedKey() == replacement)
    }

    @Test func attemptCounterPersistsAcrossReopen() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try CordonDatabase(path: path).saveAttempts(count: 4, lastFailureAt: 1234.5)
        let reopened = try CordonDatabase(path: path).loadAttempts()
        #expect(reopened.count == 4)
        #expect(reopened.lastFailureAt == 1234.5)
        try CordonDatabase(path: path).saveAttempts(count: 0, lastFailureAt: nil)
        #expect(try CordonDatabase(path: path).loadAttempts().count == 0)
    }

    @Test func eraseRemovesTheKeyFromTheFileAndTheLog() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let marker: [UInt8] = Array("SEALED-MARKER-0123456789".utf8)
        try database.saveWrappedKey(
            WrappedKey(kdf: KDFParameters.insecureFast(salt: Array(0..<16)), sealed: marker), now: 1)
        try database.eraseKeystore()
        #expect(try database.loadWrappedKey() == nil)
        #expect(try database.integrityCheck() == "ok")
        // secure_delete and the WAL truncation leave no copy of the sealed bytes on disk.
        for file in [path, path + "-wal"] {
            guard let contents = FileManager.default.contents(atPath: file) else { continue }
            #expect(contents.range(of: Data(marker)) == nil, "\(file) still holds the erased key")
        }
    }

    @Test func aReplacedKeyLeavesNoCopyOfTheOldRecordInTheFileOrTheLog() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let old: [UInt8] = Array("OLD-WRAPPED-KEY-0123456789".utf8)
        let oldSalt: [UInt8] = Array("OLD-SALT-abcdefgh".utf8)
        try database.saveWrappedKey(WrappedKey(kdf: KDFParameters.insecureFast(salt: oldSalt), sealed: old), now: 1)
        // A passcode change re-wraps: same row, new salt and sealed bytes.
        let new = WrappedKey(kdf: KDFParameters.insecureFast(salt: Array(0..<16)), sealed: Array("NEW-KEY".utf8))
        try database.saveWrappedKey(new, now: 2)
        #expect(try database.loadWrappedKey() == new)
        for file in CordonDatabase.files(of: path) {
            guard let contents = FileManager.default.contents(atPath: file) else { continue }
            #expect(contents.range(of: Data(old)) == nil, "\(file) still holds the old wrapped key")
            #expect(contents.range(of: Data(oldSalt)) == nil, "\(file) still holds the old salt")
        }
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(wal == 0, "the WAL is truncated")
    }

    @Test func theDatabaseAndItsLogAreCreatedPrivate() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let previous = umask(0o022)
        defer { umask(previous) }
        let database = try CordonDatabase(path: path)
        try database.saveAttempts(count: 1, lastFailureAt: nil)
        for file in CordonDatabase.files(of: path) {
            #expect(try mode(file) == 0o600, "\(file)")
        }
        #expect(database.permissionsTightened.isEmpty, "created private, nothing to tighten")
    }

    @Test func looseFilesAreTightenedAtEveryOpen() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Left open: SQLite removes the WAL and shared-memory files when the last connection closes.
        let first = try CordonDatabase(path: path)
        try first.saveAttempts(count: 1, lastFailureAt: nil)
        for file in CordonDatabase.files(of: path) { #expect(chmod(file, 0o644) == 0) }
        let reopened = try CordonDatabase(path: path)
        for file in CordonDatabase.files(of: path) {
            #expect(try mode(file) == 0o600, "\(file)")
        }
        #expect(reopened.permissionsTightened == CordonDatabase.files(of: path).map { "\($0): 0644 -> 0600" })
        #expect(try CordonDatabase(path: path).permissionsTightened.isEmpty)
        withExtendedLifetime(first) {}
    }

    func mode(_ file: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
    }

    @Test func readOnlyOpenSeesCommittedWrites() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = try CordonDatabase(path: path)
        let reader = try CordonDatabase(path: path, readOnly: true)
        try writer.saveAttempts(count: 2, lastFailureAt: 10)
        #expect(try reader.loadAttempts().count == 2)
        #expect(throws: (any Error).self) { try reader.saveAttempts(count: 3, lastFailureAt: 11) }
    }

    @Test func unopenablePathIsAnError() {
        #expect(throws: (any Error).self) { try CordonDatabase(path: "/nonexistent-dir/x/cordon.sqlite") }
    }
}
