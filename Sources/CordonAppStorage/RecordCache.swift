import CCordonSQLiteProbe
import CordonLocking
import CordonProtocol
import CordonSecrets
import Foundation
import GRDB

/// One app's sealed records held in memory by the agent, so that a `Storage.Get` of a record read
/// before is answered on the agent's loop with no trip to the store thread and no disk access
/// (docs/PERFORMANCE.md, "Data calls on the loop"). Values stay sealed; each hit is opened (and
/// its tag checked) for that call.
///
/// The file is shared with the app's own `SecureStore`, so a held record is good only while
/// nobody wrote the file since: a read-only connection of its own (the ``Probe``) reads SQLite's
/// `PRAGMA data_version`, which changes when any other connection commits; a change drops every
/// held record. A record read on the store thread is kept only when the version was the same
/// before the read was dispatched and after it came back, so no write in between is missed.
///
/// Not `Sendable`: it lives on the agent's loop. ``Probe/open(path:)`` runs on the store thread.
public final class RecordCache {
    /// At most this many bytes of sealed values are held; past it, the oldest half goes.
    public static let capacityBytes = 4 * 1024 * 1024

    /// A read-only connection to the file that reads its change counter only (`CCordonSQLiteProbe`:
    /// one prepared statement, stepped on the caller's thread; through GRDB's `DatabaseQueue` each
    /// read was a `DispatchQueue.sync` into the queue's thread). `busy_timeout` 0: in WAL mode a
    /// reader never waits for a writer, and a busy file is a miss, never a stall. The lock is
    /// uncontended (the loop reads, the store thread opens and closes) and makes the hand-over
    /// between them one that ThreadSanitizer sees.
    public final class Probe: Sendable {
        private let connection: Locked<OpaquePointer?>

        private init?(path: String) {
            guard let connection = cordon_sqlite_probe_open(path) else { return nil }
            self.connection = Locked(connection)
        }

        /// Opens the probe of the file at `path` (on the store thread); nil when there is no file.
        public static func open(path: String) -> Probe? { Probe(path: path) }

        /// `PRAGMA data_version`, nil when SQLite could not answer at once (or once closed).
        func version() -> Int64? {
            connection.withLock { connection in
                guard let connection else { return nil }
                var version: Int64 = 0
                return cordon_sqlite_probe_version(connection, &version) == 0 ? version : nil
            }
        }

        /// Closes the connection (on the store thread).
        public func close() {
            connection.withLock { connection in
                cordon_sqlite_probe_close(connection)
                connection = nil
            }
        }

        deinit { close() }
    }

    public let appId: String
    private var keys: StorageKeys?
    private var probe: Probe?
    /// The version the held records are valid for.
    private var validFor: Int64?
    private var records: [[UInt8]: [UInt8]] = [:]
    private var order: [[UInt8]] = []
    private var bytes = 0

    init(appId: String, keys: StorageKeys) {
        self.appId = appId
        self.keys = keys
    }

    /// Whether it has its probe yet (``attach(_:)``).
    public var hasProbe: Bool { probe != nil }

    /// Gives it the probe opened on the store thread.
    public func attach(_ probe: Probe) {
        if self.probe == nil { self.probe = probe } else { probe.close() }
    }

    /// The file's version now, nil when it cannot be read (no probe yet, or a busy file).
    public func version() -> Int64? { probe?.version() }

    /// The opened value of `name` in `namespace` lent to `body` when it is held and the file has
    /// not changed; nil on a miss (the caller reads it on the store thread). Throws
    /// `recordTampered` when a held record does not open.
    public func value<R>(namespace: String, name: String, _ body: (UnsafeRawBufferPointer) -> R)
        throws(CordonError) -> R?
    {
        guard let keys, !records.isEmpty else { return nil }
        guard let now = version(), now == validFor else {
            drop()
            return nil
        }
        guard let sealed = records[keys.lookup(namespace: namespace, name: name)] else { return nil }
        return try open(sealed, namespace: namespace, name: name, body)
    }

    /// Opens a sealed value of `name` in `namespace` (read on the store thread) and lends it to
    /// `body`; throws `recordTampered` when it does not open, `containerLocked` once closed.
    public func open<R>(_ sealed: [UInt8], namespace: String, name: String, _ body: (UnsafeRawBufferPointer) -> R)
        throws(CordonError) -> R
    {
        guard let keys else { throw .containerLocked(appId: appId, state: "closed") }
        do {
            return try keys.sealer.withOpened(sealed, slot: [appId, namespace, name], body)
        } catch {
            throw .recordTampered(namespace: namespace, name: name)
        }
    }

    /// Keeps the sealed value of `name` in `namespace` read on the store thread, if the file's
    /// version is `before` (read before the read was dispatched) still now.
    public func keep(_ sealed: [UInt8], namespace: String, name: String, versionBefore before: Int64?) {
        guard let keys, let before, let now = version(), now == before else { return }
        if validFor != now {
            drop()
            validFor = now
        }
        let lookup = keys.lookup(namespace: namespace, name: name)
        if let old = records.updateValue(sealed, forKey: lookup) {
            bytes -= old.count
        } else {
            order.append(lookup)
        }
        bytes += sealed.count
        while bytes > Self.capacityBytes, order.count > 1 {
            let evicted = order.prefix(order.count / 2)
            for lookup in evicted { bytes -= records.removeValue(forKey: lookup)?.count ?? 0 }
            order.removeFirst(evicted.count)
        }
    }

    /// How many records are held.
    public var count: Int { records.count }

    /// Drops every held record.
    public func drop() {
        records.removeAll()
        order.removeAll()
        bytes = 0
        validFor = nil
    }

    /// Drops the records and the keys; the probe is returned for the caller to close on the
    /// store thread.
    public func close() -> Probe? {
        drop()
        keys = nil
        defer { probe = nil }
        return probe
    }
}

extension AppStorage {
    /// A cache of this storage's records for the agent's loop (sharing its keys); nil once closed.
    public func makeRecordCache() -> RecordCache? {
        state.withLock { state in state.keys.map { RecordCache(appId: appId, keys: $0) } }
    }

    /// The sealed value of `name` in `namespace` as stored, nil when there is none (on the store
    /// thread; ``RecordCache`` opens it).
    public func sealedValue(namespace: String, name: String) throws(CordonError) -> [UInt8]? {
        try Self.check(namespace: namespace, name: name)
        return try withOpen(create: false) { (keys, queue) throws(CordonError) -> [UInt8]? in
            guard let queue else { return nil }
            let lookup = keys.lookup(namespace: namespace, name: name)
            return try read(queue) { db in
                try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT sealedValue FROM records WHERE lookup = ?"),
                    arguments: [Data(lookup)]
                ).map { Array($0) }
            }
        }
    }
}
