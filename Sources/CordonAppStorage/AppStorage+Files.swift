import CordonProtocol
import CordonSecrets
import Crypto
import Foundation
import GRDB

/// The two keys of one app's storage, derived from its app key (docs/ARCHITECTURE.md, "Keys").
struct StorageKeys: Sendable {
    /// Seals values and names.
    let sealer: RecordSealer
    /// The HMAC that finds a row without storing its name, keyed and not yet fed: each lookup
    /// copies it, so the key's padding blocks are hashed once, not on every call.
    private let names: HMAC<SHA256>

    init(appKey: SecureBytes, appId: String) {
        let custody = KeyCustody()
        let records = custody.purposeKey(master: appKey, purpose: ["storage.records", appId])
        let names = custody.purposeKey(master: appKey, purpose: ["storage.names", appId])
        defer {
            records.zero()
            names.zero()
        }
        sealer = RecordSealer(key: records)
        self.names = HMAC<SHA256>(key: names.withUnsafeBytes { SymmetricKey(data: $0) })
    }

    /// The row of `name` in `namespace`.
    func lookup(namespace: String, name: String) -> [UInt8] {
        mac(Self.encode(["record", namespace, name]))
    }

    /// The rows of `namespace` (for `list`).
    func space(_ namespace: String) -> [UInt8] {
        mac(Self.encode(["space", namespace]))
    }

    private func mac(_ message: [UInt8]) -> [UInt8] {
        var hmac = names
        hmac.update(data: message)
        return Array(hmac.finalize())
    }

    /// Each field's UTF-8 length (4 bytes, big-endian), then its bytes: no two lists encode alike.
    static func encode(_ fields: [String]) -> [UInt8] {
        var data: [UInt8] = []
        for field in fields {
            let bytes = Array(field.utf8)
            let length = UInt32(bytes.count)
            data += [
                UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
            ]
            data += bytes
        }
        return data
    }
}

/// How much one app stores: its records and the bytes of its file and log.
public struct StorageUsage: Sendable, Equatable, Codable {
    public var appId: String
    public var records: Int
    public var bytes: Int

    public init(appId: String, records: Int, bytes: Int) {
        self.appId = appId
        self.records = records
        self.bytes = bytes
    }
}

extension AppStorage {
    /// The storage directory under `dataDirectory`.
    public static func directory(dataDirectory: String) -> String { dataDirectory + "/storage" }

    /// The id of every app with a storage file; needs no key.
    public static func storedAppIds(dataDirectory: String) -> [String] {
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: directory(dataDirectory: dataDirectory))) ?? []
        return files.filter { $0.hasSuffix(".sqlite") }.sorted().map { String($0.dropLast(".sqlite".count)) }
    }

    /// The records and bytes of every app with a storage file; needs no key (it reads no record).
    public static func usage(dataDirectory: String) -> [StorageUsage] {
        let directory = directory(dataDirectory: dataDirectory)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".sqlite") }.sorted().map { file in
            let appId = String(file.dropLast(".sqlite".count))
            let path = directory + "/" + file
            var records = 0
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(5)
            if let queue = try? DatabaseQueue(path: path, configuration: configuration) {
                records =
                    (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0 }) ?? 0
                try? queue.close()
            }
            let bytes = SQLiteFiles.files(of: path).reduce(0) { total, file in
                var info = stat()
                return total + (stat(file, &info) == 0 ? Int(info.st_size) : 0)
            }
            return StorageUsage(appId: appId, records: records, bytes: bytes)
        }
    }

    /// Deletes `appId`'s file, its WAL and its shared-memory file (after a key rotation, so what
    /// a copy holds stays sealed under a key no one derives again).
    public static func erase(dataDirectory: String, appId: String) throws {
        for file in SQLiteFiles.files(of: path(dataDirectory: dataDirectory, appId: appId))
        where unlink(file) != 0 && errno != ENOENT {
            throw CordonError.storageFailed(
                appId: appId, reason: "cannot delete \(file): \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes the whole storage directory (a full wipe).
    public static func eraseAll(dataDirectory: String) throws {
        let directory = directory(dataDirectory: dataDirectory)
        guard FileManager.default.fileExists(atPath: directory) else { return }
        try FileManager.default.removeItem(atPath: directory)
    }
}
