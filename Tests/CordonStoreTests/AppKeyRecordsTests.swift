import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import Testing

/// The `appKey` table (docs/ARCHITECTURE.md, "Keys"): one wrapped random key per app, never
/// replaced; a selective wipe deletes it and leaves no copy in the database file or its WAL.
@Suite struct AppKeyRecordsTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-appkeys-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    func keystore(_ sealed: String) -> WrappedKey {
        WrappedKey(kdf: KDFParameters.insecureFast(salt: Array(0..<16)), sealed: Array(sealed.utf8))
    }

    /// Whether the database file or its WAL holds `bytes` anywhere.
    func onDisk(_ bytes: [UInt8]) -> [String] {
        CordonDatabase.files(of: path).filter { file in
            FileManager.default.contents(atPath: file)?.range(of: Data(bytes)) != nil
        }
    }

    @Test func aKeyIsStoredOnceAndNeverReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.wrappedAppKeys().isEmpty)
        try database.insertAppKey(appId: "com.example.notes", wrapped: Array("first".utf8), now: 1)
        #expect(throws: (any Error).self) {
            try database.insertAppKey(appId: "com.example.notes", wrapped: Array("second".utf8), now: 2)
        }
        #expect(try CordonDatabase(path: path).wrappedAppKeys() == ["com.example.notes": Array("first".utf8)])
    }

    @Test func destroyingAKeyLeavesNoCopyOfItsWrappedBytesInTheFileOrTheLog() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let notes = Array("WRAPPED-NOTES-KEY-0123456789abcdef".utf8)
        let mail = Array("WRAPPED-MAIL-KEY-0123456789abcdef".utf8)
        try database.insertAppKey(appId: "com.example.notes", wrapped: notes, now: 1)
        // Checkpointed into the database file (a keystore write truncates the WAL)...
        try database.saveWrappedKey(keystore("master"), now: 1)
        #expect(onDisk(notes) == [path])
        // ...and a later write leaves a copy of the page in the WAL too.
        try database.insertAppKey(appId: "com.example.mail", wrapped: mail, now: 2)
        #expect(!onDisk(mail).isEmpty)
        #expect(try database.destroyAppKey(appId: "com.example.notes", now: 3) == 1)
        #expect(try database.wrappedAppKeys() == ["com.example.mail": mail])
        #expect(onDisk(notes).isEmpty, "the destroyed key's wrapped bytes are still on disk")
        #expect(!onDisk(mail).isEmpty, "the other app's key stays")
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(wal == 0, "the WAL is truncated")
        // The legacy generation is raised with it, in the same transaction.
        #expect(try database.appGenerations() == ["com.example.notes": 1])
        #expect(try database.integrityCheck() == "ok")
    }

    @Test func aMigrationAddsMissingKeysWithTheKeystoreAndReplacesNone() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        try database.saveWrappedKey(keystore("OLD-MASTER-WRAPPING-0123456789"), now: 1)
        try database.insertAppKey(appId: "com.example.notes", wrapped: Array("kept".utf8), now: 1)
        let upgraded = keystore("new")
        try database.storeAppKeyMigration(
            ["com.example.notes": Array("other".utf8), "com.example.mail": Array("mail".utf8)], keystore: upgraded,
            now: 2)
        #expect(
            try database.wrappedAppKeys() == [
                "com.example.notes": Array("kept".utf8), "com.example.mail": Array("mail".utf8),
            ])
        #expect(try database.loadWrappedKey() == upgraded)
        #expect(onDisk(Array("OLD-MASTER-WRAPPING-0123456789".utf8)).isEmpty)
    }

    @Test func aFullWipeErasesEveryAppKey() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let wrapped = Array("WRAPPED-KEY-ERASED-WITH-THE-KEYSTORE".utf8)
        try database.saveWrappedKey(keystore("master"), now: 1)
        try database.insertAppKey(appId: "com.example.notes", wrapped: wrapped, now: 1)
        try database.eraseKeystore()
        #expect(try database.wrappedAppKeys().isEmpty)
        #expect(onDisk(wrapped).isEmpty)
    }

    @Test func theAuditedAppIdsAreThoseTheLogNames() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        _ = try database.appendAudit([
            AuditEntry(time: 1, category: .decision, appId: "com.example.notes", outcome: "allow", reason: "r"),
            AuditEntry(time: 2, category: .decision, appId: nil, outcome: "allow", reason: "r"),
            AuditEntry(time: 3, category: .decision, appId: "com.example.notes", outcome: "allow", reason: "r"),
            AuditEntry(time: 4, category: .decision, appId: "com.example.mail", outcome: "allow", reason: "r"),
        ])
        #expect(try database.auditedAppIds() == ["com.example.notes", "com.example.mail"])
    }
}
