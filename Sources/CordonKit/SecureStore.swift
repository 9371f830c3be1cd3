import CordonAppStorage
import CordonProtocol
import CordonSecrets
import Foundation

/// An encrypted key-value store for a wrapped app, kept in the app's own process: records in a
/// SQLite file of the app's own, sealed under a key derived from the app key, readable only while
/// the container lets the app hold its key (docs/ARCHITECTURE.md, "Storage").
///
/// ```swift
/// let app = try await CordonApp.connect(appId: "com.example.notes")
/// let store = try SecureStore(app: app)
/// try await store.put("draft", Data("hello".utf8))
/// let draft = try await store.get("draft")
/// ```
/// Every call throws `CordonError`: `containerLocked` while the key may not be used (locked under
/// `storage.dataAccess: whenUnlocked`, revoked, wiped), `valueTooLarge` over
/// ``maxValueBytes``, `invalidRecordName` for an empty name, one over ``maxNameBytes`` or with a
/// NUL, `recordTampered` for a record changed or copied on disk, `storageFailed` when the file
/// cannot be written (a full disk: nothing stored is changed). A `get` is a SQLite read and an
/// AES-GCM open; the key is fetched from the agent once, and again after each lock.
public final class SecureStore: Sendable {
    /// The largest value, in bytes (32 KiB: it fits one varlink message as base64).
    public static let maxValueBytes = AppStorage.maxValueBytes
    /// The longest name or namespace, in bytes of UTF-8.
    public static let maxNameBytes = AppStorage.maxNameBytes

    /// The app whose records these are.
    public let app: CordonApp
    /// The namespace every call of this store works in.
    public let namespace: String
    /// The SQLite file (`<data dir>/storage/<app id>.sqlite`).
    public let path: String

    /// A store of `app`'s records in `namespace`. `dataDirectory` is the agent's data directory
    /// (default: `CORDON_DATA_DIR`, else `$XDG_DATA_HOME/cordon`, else `~/.local/share/cordon`).
    public init(app: CordonApp, namespace: String = AppStorage.defaultNamespace, dataDirectory: String? = nil)
        throws(CordonError)
    {
        if let problem = AppStorage.nameProblem(namespace) {
            throw .invalidRecordName(field: "namespace", reason: problem)
        }
        let directory =
            dataDirectory
            ?? CordonPaths.resolve(environment: ProcessInfo.processInfo.environment, uid: getuid()).dataDirectory
        self.app = app
        self.namespace = namespace
        path = AppStorage.path(dataDirectory: directory, appId: app.appId)
    }

    /// Stores `value` under `name`, replacing what was there; returns once it is on disk.
    public func put<Bytes: DataProtocol>(_ name: String, _ value: Bytes) async throws {
        try await storage().put(namespace: namespace, name: name, value: value)
    }

    /// The value stored under `name`, or `nil`.
    public func get(_ name: String) async throws -> Data? {
        try await storage().withValue(namespace: namespace, name: name) { Data($0) }
    }

    /// Deletes `name`; returns whether it was there.
    @discardableResult
    public func delete(_ name: String) async throws -> Bool {
        try await storage().delete(namespace: namespace, name: name)
    }

    /// The names that start with `prefix`, sorted.
    public func list(prefix: String = "") async throws -> [String] {
        try await storage().list(namespace: namespace, prefix: prefix)
    }

    /// The open storage, fetching the app key first when this app holds none.
    private func storage() async throws -> AppStorage {
        let keys = app.keyState
        if let open = keys.storage(at: path) { return open }
        let epoch = keys.epoch
        let key: SecureBytes
        do {
            key = try await app.secureKey()
        } catch CordonError.keyUnavailable(let state) {
            throw CordonError.containerLocked(appId: app.appId, state: state)
        }
        return try keys.open(path: path, appId: app.appId, key: key, fetchedAt: epoch)
    }
}
