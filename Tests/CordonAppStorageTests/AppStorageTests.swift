import CordonAppStorage
import CordonProtocol
import CordonSecrets
import Crypto
import Foundation
import GRDB
import Testing

@Suite struct AppStorageTests {
    let dataDirectory: String
    let appId = "org.example.notes"

    init() throws {
        dataDirectory = "/tmp/cordon-appstorage-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
    }

    var path: String { AppStorage.path(dataDirectory: dataDirectory, appId: appId) }

    func key(_ byte: UInt8) -> SecureBytes { SecureBytes(copying: [UInt8](repeating: byte, count: 32)) }

    func storage(_ byte: UInt8 = 1) -> AppStorage { AppStorage(path: path, appId: appId, appKey: key(byte)) }

    func text(_ bytes: SecureBytes?) -> String? {
        bytes.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }

    @Test func putGetDeleteListRoundTrip() throws {
        let store = storage()
        #expect(try store.get(namespace: "default", name: "missing") == nil)
        #expect(!FileManager.default.fileExists(atPath: path), "a read creates no file")
        try store.put(namespace: "default", name: "draft/1", value: Array("first".utf8))
        try store.put(namespace: "default", name: "draft/2", value: Array("second".utf8))
        try store.put(namespace: "default", name: "other", value: Array("third".utf8))
        try store.put(namespace: "secrets", name: "draft/1", value: Array("elsewhere".utf8))
        #expect(text(try store.get(namespace: "default", name: "draft/1")) == "first")
        #expect(text(try store.get(namespace: "secrets", name: "draft/1")) == "elsewhere")
        #expect(try store.list(namespace: "default", prefix: "draft/") == ["draft/1", "draft/2"])
        #expect(try store.list(namespace: "default") == ["draft/1", "draft/2", "other"])
        try store.put(namespace: "default", name: "draft/1", value: Array("replaced".utf8))
        #expect(text(try store.get(namespace: "default", name: "draft/1")) == "replaced")
        #expect(try store.delete(namespace: "default", name: "draft/1"))
        #expect(try !store.delete(namespace: "default", name: "draft/1"))
        #expect(try store.get(namespace: "default", name: "draft/1") == nil)
        // A second opener with the same app key (the agent beside the SDK) reads the same records.
        #expect(text(try storage().get(namespace: "default", name: "draft/2")) == "second")
    }

    /// The stored layout does not change with the code that writes it: a row is found by
    /// HMAC-SHA256 under the names key over the length-prefixed fields, and its name is sealed
    /// for the slot `[appId, namespace, lower-case hex of that HMAC, "name"]`, computed here
    /// independently of `AppStorage`.
    @Test func theRowLookupAndTheNameSlotKeepTheirFormat() throws {
        try storage().put(namespace: "default", name: "draft/1", value: Array("first".utf8))
        func field(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            return withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { Array($0) } + bytes
        }
        let custody = KeyCustody()
        let names = custody.purposeKey(master: key(1), purpose: ["storage.names", appId])
        let records = custody.purposeKey(master: key(1), purpose: ["storage.records", appId])
        let lookup = names.withUnsafeBytes {
            Array(
                HMAC<SHA256>.authenticationCode(
                    for: field("record") + field("default") + field("draft/1"), using: SymmetricKey(data: $0)))
        }
        let hex = lookup.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
        let queue = try DatabaseQueue(path: path)
        let sealed = try #require(
            try queue.read { db in
                try Data.fetchOne(db, sql: "SELECT sealedName FROM records WHERE lookup = ?", arguments: [Data(lookup)])
            })
        let opened = try RecordSealer(key: records).open(Array(sealed), slot: [appId, "default", hex, "name"])
        #expect(text(opened) == "draft/1")
    }

    @Test func filesArePrivate() throws {
        try storage().put(namespace: "default", name: "n", value: [1])
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(AppStorage.directory(dataDirectory: dataDirectory), &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func noNameOrValueIsInPlaintextOnDisk() throws {
        let store = storage()
        let name = "plaintext-name-marker-4711"
        let value = "plaintext-value-marker-0815"
        try store.put(namespace: "namespace-marker-42", name: name, value: Array(value.utf8))
        #expect(text(try store.get(namespace: "namespace-marker-42", name: name)) == value)
        for file in [path, path + "-wal"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(!bytes.isEmpty || file.hasSuffix("-wal"))
            for marker in [name, value, "namespace-marker-42"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) found in \(file)")
            }
        }
    }

    @Test func aRecordCopiedIntoAnotherSlotDoesNotOpen() throws {
        let store = storage()
        try store.put(namespace: "default", name: "alice", value: Array("alice's secret".utf8))
        try store.put(namespace: "default", name: "bob", value: Array("bob's secret".utf8))
        store.close()
        // An attacker with the file copies alice's sealed value over bob's row.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT lookup, sealedValue FROM records")
            let values = rows.map { $0["sealedValue"] as Data }
            try db.execute(sql: "UPDATE records SET sealedValue = ?", arguments: [values[0]])
        }
        try queue.close()
        let reopened = storage()
        var tampered = 0
        for name in ["alice", "bob"] {
            do {
                _ = try reopened.get(namespace: "default", name: name)
            } catch {
                #expect(error == .recordTampered(namespace: "default", name: name))
                tampered += 1
            }
        }
        #expect(tampered == 1, "exactly the overwritten record fails to open")
    }

    @Test func withValueLendsTheSameBytesAndRefusesWhatGetRefuses() throws {
        let store = storage()
        try store.put(namespace: "default", name: "n", value: Array("lent".utf8))
        #expect(try store.withValue(namespace: "default", name: "n") { String(decoding: $0, as: UTF8.self) } == "lent")
        #expect(try store.withValue(namespace: "default", name: "missing") { $0.count } == nil)
        #expect(throws: CordonError.invalidRecordName(field: "name", reason: "it contains a NUL byte")) {
            try store.withValue(namespace: "default", name: "a\u{0}b") { $0.count }
        }
        store.close()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE records SET sealedValue = zeroblob(40)") }
        try queue.close()
        #expect(throws: CordonError.recordTampered(namespace: "default", name: "n")) {
            try storage().withValue(namespace: "default", name: "n") { $0.count }
        }
        #expect(throws: CordonError.containerLocked(appId: appId, state: "closed")) {
            try store.withValue(namespace: "default", name: "n") { $0.count }
        }
    }

    @Test func anotherKeyOpensNothing() throws {
        try storage(1).put(namespace: "default", name: "n", value: Array("v".utf8))
        let other = storage(2)
        // Another key finds no row (its lookup differs) and opens no name.
        #expect(try other.get(namespace: "default", name: "n") == nil)
        #expect(try other.list(namespace: "default").isEmpty)
    }

    @Test func badInputIsRefusedAndNothingIsLost() throws {
        let store = storage()
        try store.put(namespace: "default", name: "keep", value: Array("kept".utf8))
        let big = [UInt8](repeating: 7, count: AppStorage.maxValueBytes + 1)
        #expect(throws: CordonError.valueTooLarge(size: big.count, limit: AppStorage.maxValueBytes)) {
            try store.put(namespace: "default", name: "keep", value: big)
        }
        #expect(throws: CordonError.invalidRecordName(field: "name", reason: "it contains a NUL byte")) {
            try store.put(namespace: "default", name: "a\u{0}b", value: [1])
        }
        let long = String(repeating: "x", count: AppStorage.maxNameBytes + 1)
        #expect(
            throws: CordonError.invalidRecordName(field: "name", reason: "it is 1025 bytes, over the limit of 1024")
        ) {
            try store.put(namespace: "default", name: long, value: [1])
        }
        #expect(throws: CordonError.invalidRecordName(field: "namespace", reason: "it is empty")) {
            try store.get(namespace: "", name: "keep")
        }
        // The largest value fits exactly.
        try store.put(namespace: "default", name: "max", value: [UInt8](repeating: 1, count: AppStorage.maxValueBytes))
        #expect(text(try store.get(namespace: "default", name: "keep")) == "kept")
    }

    @Test func closedStorageRefusesEveryCall() throws {
        let store = storage()
        try store.put(namespace: "default", name: "n", value: [1])
        store.close()
        #expect(store.isClosed)
        #expect(throws: CordonError.containerLocked(appId: appId, state: "closed")) {
            try store.get(namespace: "default", name: "n")
        }
        #expect(throws: CordonError.containerLocked(appId: appId, state: "closed")) {
            try store.put(namespace: "default", name: "n", value: [2])
        }
    }

    @Test func usageAndErase() throws {
        let store = storage()
        try store.put(namespace: "default", name: "a", value: [1, 2, 3])
        try store.put(namespace: "default", name: "b", value: [4])
        let usage = AppStorage.usage(dataDirectory: dataDirectory)
        #expect(usage.map(\.appId) == [appId])
        #expect(usage.first?.records == 2)
        #expect((usage.first?.bytes ?? 0) > 0)
        store.close()
        try AppStorage.erase(dataDirectory: dataDirectory, appId: appId)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(AppStorage.usage(dataDirectory: dataDirectory).isEmpty)
    }

    @Test func appKeyGenerationZeroIsTheOriginalDerivation() {
        let custody = KeyCustody()
        let master = key(9)
        let bytes = { (key: SecureBytes) in key.withUnsafeBytes { Array($0) } }
        #expect(
            bytes(custody.legacyAppKey(master: master, appId: appId))
                == bytes(custody.legacyAppKey(master: master, appId: appId, generation: 0)))
        #expect(
            bytes(custody.legacyAppKey(master: master, appId: appId, generation: 1))
                != bytes(custody.legacyAppKey(master: master, appId: appId)))
        #expect(
            bytes(custody.legacyAppKey(master: master, appId: appId, generation: 1))
                != bytes(custody.legacyAppKey(master: master, appId: appId, generation: 2)))
    }
}
