import CordonLocking
import CordonProtocol
import CordonSecrets
import Crypto
import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// One app's encrypted key-value records: `<data dir>/storage/<app id>.sqlite`, read and written
/// the same way by the SDK (`SecureStore`, in the app's process) and by the agent
/// (`io.cordon.Storage`) (docs/ARCHITECTURE.md, "Storage").
///
/// Keys come from the app key alone, so both sides derive the same: values are sealed with
/// `RecordSealer` under `purposeKey(appKey, ["storage.records", appId])` with the slot
/// `[app id, namespace, name]`; the row is found by an HMAC-SHA256 of the namespace and name under
/// `purposeKey(appKey, ["storage.names", appId])`, and the name itself is kept sealed (for
/// `list`). No name or value is ever written in plaintext.
///
/// `close()` zeroes the keys and closes the file; it waits for an operation in flight, so a
/// write either committed before it returned or never happened (SQLite's transaction).
public final class AppStorage: Sendable {
    /// The largest value, in bytes: 32 KiB, so a value travels as base64 (43,692 characters) in
    /// one varlink message with room for its names under the agent's 64 KiB frame limit.
    public static let maxValueBytes = 32 * 1024
    /// The longest namespace or name, in bytes of UTF-8.
    public static let maxNameBytes = 1024
    /// The namespace used when none is given.
    public static let defaultNamespace = "default"

    /// The app whose records these are.
    public let appId: String
    /// The SQLite file.
    public let path: String
    let state: Locked<State>

    struct State {
        var keys: StorageKeys?
        var queue: DatabaseQueue?
    }

    /// The file of `appId`'s records under `dataDirectory`.
    public static func path(dataDirectory: String, appId: String) -> String {
        dataDirectory + "/storage/" + appId + ".sqlite"
    }

    /// Opens `appId`'s records at `path` with the keys derived from `appKey` (the caller keeps and
    /// zeroes its own copy). Nothing is created until the first `put`.
    public init(path: String, appId: String, appKey: SecureBytes) {
        self.path = path
        self.appId = appId
        state = Locked(State(keys: StorageKeys(appKey: appKey, appId: appId), queue: nil))
    }

    /// Whether the keys are gone (`close()` ran).
    public var isClosed: Bool { state.withLock { $0.keys == nil } }

    /// Zeroes the keys and closes the file. Waits for an operation in flight.
    public func close() {
        state.withLock { state in
            state.keys = nil
            try? state.queue?.close()
            state.queue = nil
        }
    }

    /// Stores `value` under `name` in `namespace`, replacing any record there.
    public func put<Bytes: DataProtocol>(namespace: String, name: String, value: Bytes) throws(CordonError) {
        try Self.check(namespace: namespace, name: name)
        guard value.count <= Self.maxValueBytes else {
            throw .valueTooLarge(size: value.count, limit: Self.maxValueBytes)
        }
        try withOpen(create: true) { (keys, queue) throws(CordonError) in
            let lookup = keys.lookup(namespace: namespace, name: name)
            let sealedValue: [UInt8]
            let sealedName: [UInt8]
            do {
                sealedValue = try keys.sealer.seal(value, slot: [appId, namespace, name])
                sealedName = try keys.sealer.seal(Array(name.utf8), slot: nameSlot(namespace, lookup))
            } catch {
                throw .storageFailed(appId: appId, reason: "sealing the record failed")
            }
            let space = keys.space(namespace)
            guard let queue else { throw .storageFailed(appId: appId, reason: "the storage file is not open") }
            try write(queue) { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO records (lookup, space, sealedName, sealedValue) VALUES (?, ?, ?, ?)",
                    arguments: [Data(lookup), Data(space), Data(sealedName), Data(sealedValue)])
            }
        }
    }

    /// The value of `name` in `namespace`, in locked memory; `nil` when there is none. Throws
    /// `recordTampered` when the stored bytes do not open for this slot.
    public func get(namespace: String, name: String) throws(CordonError) -> SecureBytes? {
        try withValue(namespace: namespace, name: name) { SecureBytes(copying: $0) }
    }

    /// Lends the value of `name` in `namespace` to `body` and zeroes it afterwards; `nil` when
    /// there is none. For callers that copy the value out anyway (the SDK's `Data`, the agent's
    /// reply): no locked page per read. Throws `recordTampered` as `get` does.
    public func withValue<R>(namespace: String, name: String, _ body: (UnsafeRawBufferPointer) -> R)
        throws(CordonError) -> R?
    {
        try Self.check(namespace: namespace, name: name)
        return try withOpen(create: false) { (keys, queue) throws(CordonError) -> R? in
            guard let queue else { return nil }
            let lookup = keys.lookup(namespace: namespace, name: name)
            let sealed = try read(queue) { db in
                try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT sealedValue FROM records WHERE lookup = ?"),
                    arguments: [Data(lookup)])
            }
            guard let sealed else { return nil }
            do {
                return try keys.sealer.withOpened(sealed, slot: [appId, namespace, name], body)
            } catch {
                throw .recordTampered(namespace: namespace, name: name)
            }
        } ?? nil
    }

    /// Deletes `name` in `namespace`; returns whether a record was there.
    @discardableResult
    public func delete(namespace: String, name: String) throws(CordonError) -> Bool {
        try Self.check(namespace: namespace, name: name)
        return try withOpen(create: false) { (keys, queue) throws(CordonError) -> Bool in
            guard let queue else { return false }
            let lookup = keys.lookup(namespace: namespace, name: name)
            return try write(queue) { db in
                try db.execute(sql: "DELETE FROM records WHERE lookup = ?", arguments: [Data(lookup)])
                return db.changesCount > 0
            }
        }
    }

    /// The names in `namespace` that start with `prefix`, sorted. A name that does not open
    /// (tampered) is reported as `recordTampered`.
    public func list(namespace: String, prefix: String = "") throws(CordonError) -> [String] {
        try Self.check(namespace: namespace, name: nil)
        guard prefix.utf8.count <= Self.maxNameBytes, !prefix.utf8.contains(0) else {
            throw .invalidRecordName(field: "prefix", reason: Self.nameProblem(prefix) ?? "not acceptable")
        }
        return try withOpen(create: false) { (keys, queue) throws(CordonError) -> [String] in
            guard let queue else { return [] }
            let rows = try read(queue) { db in
                try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT lookup, sealedName FROM records WHERE space = ?"),
                    arguments: [Data(keys.space(namespace))])
            }
            var names: [String] = []
            for row in rows {
                let lookup: Data = row["lookup"]
                let sealed: Data = row["sealedName"]
                let plain: SecureBytes
                do {
                    plain = try keys.sealer.open(Array(sealed), slot: nameSlot(namespace, Array(lookup)))
                } catch {
                    throw .recordTampered(namespace: namespace, name: "#" + Self.hex(Array(lookup)))
                }
                let name = plain.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                if name.hasPrefix(prefix) { names.append(name) }
            }
            return names.sorted()
        }
    }

    // MARK: - Checks

    /// Refuses a namespace or name that is empty, longer than the bound, or holds a NUL.
    static func check(namespace: String, name: String?) throws(CordonError) {
        if let problem = nameProblem(namespace) { throw .invalidRecordName(field: "namespace", reason: problem) }
        if let name, let problem = nameProblem(name) { throw .invalidRecordName(field: "name", reason: problem) }
    }

    /// Why `text` is not an acceptable namespace or name, or nil.
    public static func nameProblem(_ text: String) -> String? {
        if text.isEmpty { return "it is empty" }
        if text.utf8.count > maxNameBytes {
            return "it is \(text.utf8.count) bytes, over the limit of \(maxNameBytes)"
        }
        if text.utf8.contains(0) { return "it contains a NUL byte" }
        return nil
    }

    private func nameSlot(_ namespace: String, _ lookup: [UInt8]) -> [String] {
        [appId, namespace, Self.hex(lookup), "name"]
    }

    /// Lower-case hex, as the name slot and error messages spell a lookup.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: - The file

    /// Runs `body` with the keys and the database (nil when the file does not exist and
    /// `create` is false); `nil` when the storage is closed is turned into `containerLocked`.
    func withOpen<R>(create: Bool, _ body: (StorageKeys, DatabaseQueue?) throws(CordonError) -> R)
        throws(CordonError) -> R
    {
        try state.withLock { (state: inout State) throws(CordonError) -> R in
            guard let keys = state.keys else { throw .containerLocked(appId: appId, state: "closed") }
            if state.queue == nil, create || FileManager.default.fileExists(atPath: path) {
                state.queue = try openQueue()
            }
            return try body(keys, state.queue)
        }
    }

    private func openQueue() throws(CordonError) -> DatabaseQueue {
        let directory = (path as NSString).deletingLastPathComponent
        mkdir(directory, 0o700)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .storageFailed(appId: appId, reason: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        _ = Glibc.close(descriptor)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try Self.migrator.migrate(queue)
            _ = SQLiteFiles.makePrivate(SQLiteFiles.files(of: path))
            return queue
        } catch {
            throw .storageFailed(appId: appId, reason: Self.describe(error))
        }
    }

    private func write<R>(_ queue: DatabaseQueue, _ body: (Database) throws -> R) throws(CordonError) -> R {
        do {
            return try queue.write(body)
        } catch {
            throw .storageFailed(appId: appId, reason: Self.describe(error))
        }
    }

    /// Runs `body`, one `SELECT`, outside a transaction: in autocommit mode the statement is its
    /// own read transaction, so it sees one consistent state without the four statements GRDB's
    /// `read` adds around it (`PRAGMA query_only` on and off, `BEGIN`, `COMMIT`), each parsed again
    /// on every call (docs/PERFORMANCE.md, "Round trips").
    func read<R>(_ queue: DatabaseQueue, _ body: (Database) throws -> R) throws(CordonError) -> R {
        do {
            return try queue.inDatabase(body)
        } catch {
            throw .storageFailed(appId: appId, reason: Self.describe(error))
        }
    }

    /// A SQLite error as a reason a user can act on.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return String(describing: error) }
        switch error.resultCode {
        case .SQLITE_FULL: return "the disk is full"
        case .SQLITE_IOERR: return "an I/O error: \(error.message ?? "")"
        case .SQLITE_NOTADB, .SQLITE_CORRUPT: return "the storage file is damaged"
        default: return error.message ?? "SQLite error \(error.resultCode.rawValue)"
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-records") { db in
            try db.execute(
                sql: """
                    CREATE TABLE records (
                      lookup BLOB PRIMARY KEY NOT NULL,
                      space BLOB NOT NULL,
                      sealedName BLOB NOT NULL,
                      sealedValue BLOB NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX records_space ON records(space);
                    """)
        }
        return migrator
    }
}
