import CordonAppStorage
import CordonLocking
import CordonSecrets
import Foundation
import GRDB

/// The agent's SQLite database: the wrapped master key, the failed-attempt counter, the audit log,
/// the highest accepted serial of each signed policy file and the sealed software tokens.
///
/// WAL mode with `synchronous = FULL`: a write that returned is on disk, so the attempt
/// counter survives a `kill -9` right after it is stored. The database, its WAL and its
/// shared-memory file are the user's alone (0600): created so before SQLite opens them (SQLite
/// gives the WAL and shared-memory files the database's mode) and tightened at every open.
public final class CordonDatabase: Sendable {
    private let queue: DatabaseQueue
    /// The connection, for this module's extensions.
    var writer: DatabaseQueue { queue }
    /// The database file.
    public let path: String
    /// The files whose modes this open tightened to 0600, as `PATH: 0644 -> 0600` (the agent
    /// logs them); empty when all were private already, and for a read-only open.
    public let permissionsTightened: [String]
    /// Whether writes of the security state are anchored to a TPM (`StateAnchor.swift`).
    let anchorMode = Locked<AnchorMode>(.none)
    /// Told when a write finds the state edited while the agent runs (`onStateRefused`).
    let onRefusal = Locked<(@Sendable (StateAnchorError) -> Void)?>(nil)

    /// Opens (creating if needed) the database at `path` and migrates it; `readOnly` opens an
    /// existing database for inspection (tools, tests) while the agent runs.
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        var tightened: [String] = []
        if !readOnly {
            // Created 0600 before SQLite would create it 0644 (less the umask).
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if descriptor >= 0 { close(descriptor) }
            tightened += SQLiteFiles.makePrivate(Self.files(of: path))
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = readOnly
        if !readOnly {
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        if readOnly {
            permissionsTightened = []
            return
        }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try Self.migrator.migrate(queue)
        tightened += SQLiteFiles.makePrivate(Self.files(of: path))
        permissionsTightened = tightened
    }

    /// The database file, its WAL and its shared-memory file.
    public static func files(of path: String) -> [String] {
        SQLiteFiles.files(of: path)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-keystore") { db in
            try db.create(table: "keystore") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("version", .integer).notNull()
                table.column("kdfRounds", .integer).notNull()
                table.column("kdfBlockSize", .integer).notNull()
                table.column("kdfParallelism", .integer).notNull()
                table.column("salt", .blob).notNull()
                table.column("sealed", .blob).notNull()
                table.column("createdAt", .double).notNull()
            }
            try db.create(table: "attempts") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("failed", .integer).notNull()
                table.column("lastFailureAt", .double)
            }
        }
        registerAuditMigration(&migrator)
        registerPolicySerialMigration(&migrator)
        registerAppGenerationMigration(&migrator)
        registerTokenMigration(&migrator)
        // What protects the wrapping key, the TPM object and the recovery wrapping; records from
        // before read as software-protected without a recovery key.
        migrator.registerMigration("v6-keystore-protection") { db in
            try db.alter(table: "keystore") { table in
                table.add(column: "protection", .text).notNull().defaults(to: KeyProtection.software.rawValue)
                table.add(column: "tpmPublic", .blob)
                table.add(column: "tpmPrivate", .blob)
                table.add(column: "tpmPCRs", .text)
                table.add(column: "recoverySealed", .blob)
            }
        }
        // MARK: Identity (#15)
        registerIdentityMigration(&migrator)
        registerBiometricsMigration(&migrator)
        // MARK: Posture (#16)
        registerDeviceKeyMigration(&migrator)
        // MARK: Random app keys (#27)
        registerAppKeyMigration(&migrator)
        // MARK: State the user cannot roll back (#27)
        registerStateAnchorMigration(&migrator)
        // MARK: Fleet commands (#29)
        registerFleetMigration(&migrator)
        return migrator
    }

    /// The stored wrapped master key, if the container is initialized.
    public func loadWrappedKey() throws -> WrappedKey? {
        try queue.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM keystore WHERE id = 1") else { return nil }
            let salt: Data = row["salt"]
            let sealed: Data = row["sealed"]
            let kdf = KDFParameters(
                rounds: row["kdfRounds"], blockSize: row["kdfBlockSize"], parallelism: row["kdfParallelism"],
                salt: Array(salt))
            let protectionName: String = row["protection"]
            guard let protection = KeyProtection(rawValue: protectionName) else {
                throw KeystoreError.unknownProtection(protectionName)
            }
            var hardware: HardwareSeal?
            if let publicBlob = row["tpmPublic"] as Data?, let privateBlob = row["tpmPrivate"] as Data? {
                let pcrs = (row["tpmPCRs"] as String? ?? "").split(separator: ",").compactMap { Int($0) }
                hardware = HardwareSeal(publicBlob: Array(publicBlob), privateBlob: Array(privateBlob), pcrs: pcrs)
            }
            if protection != .software && hardware == nil { throw KeystoreError.missingHardwareSeal }
            let recovery = (row["recoverySealed"] as Data?).map { Array($0) }
            return WrappedKey(
                version: row["version"], kdf: kdf, sealed: Array(sealed), protection: protection, hardware: hardware,
                recovery: recovery, anchorIndex: (row["anchorIndex"] as Int64?).map { UInt32(truncatingIfNeeded: $0) })
        }
    }

    /// Stores (replacing) the wrapped master key, then truncates the WAL: after a passcode
    /// change no copy of the previous record (which the old passcode unwraps) stays in the log;
    /// in the database file `secure_delete` has overwritten it.
    public func saveWrappedKey(_ key: WrappedKey, now: Double) throws {
        try anchoredWrite(advance: false) { db in try Self.insertWrappedKey(key, now: now, db) }
        try truncateWAL()
    }

    /// Stores a new container's wrapped key and its anchor (`establish`) in one transaction.
    public func saveWrappedKey(_ key: WrappedKey, now: Double, anchor: StateAnchor) throws {
        try establish(anchor) { db in try Self.insertWrappedKey(key, now: now, db) }
        try truncateWAL()
    }

    /// Stores a restored container's wrapped key without an anchor: the TPM that anchored it is
    /// gone and no TPM is usable now (`cordon init --recovery` on a machine without one).
    public func saveWrappedKeyDroppingAnchor(_ key: WrappedKey, now: Double) throws {
        try queue.write { db in
            try Self.insertWrappedKey(key, now: now, db)
            try dropAnchor(db)
        }
        try truncateWAL()
    }

    static func insertWrappedKey(_ key: WrappedKey, now: Double, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO keystore (id, version, kdfRounds, kdfBlockSize, kdfParallelism, salt, sealed, createdAt,
                    protection, tpmPublic, tpmPrivate, tpmPCRs, recoverySealed, anchorIndex)
                VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                key.version, key.kdf.rounds, key.kdf.blockSize, key.kdf.parallelism, Data(key.kdf.salt),
                Data(key.sealed), now, key.protection.rawValue, key.hardware.map { Data($0.publicBlob) },
                key.hardware.map { Data($0.privateBlob) },
                key.hardware.map { $0.pcrs.map(String.init).joined(separator: ",") },
                key.recovery.map { Data($0) }, key.anchorIndex.map { Int64($0) },
            ])
    }

    /// Crypto-erase: deletes the wrapped key (overwritten on disk by `secure_delete`) and
    /// truncates the WAL so no copy of the record remains in the log.
    ///
    /// With an anchor, the erase raises the TPM's counter: a copy of the database from before the
    /// wipe is refused as rolled back. A container whose state was refused loses its anchor too
    /// (nothing of it is trusted; the next `Initialize` makes a new one).
    public func eraseKeystore() throws {
        let erase = { (db: Database) throws in
            try db.execute(sql: "DELETE FROM keystore")
            // Sealed under the master key just erased: unusable, and a new container makes a new one.
            try db.execute(sql: "DELETE FROM postureDeviceKey")
            try db.execute(sql: "DELETE FROM appKey")
        }
        if anchorProblem != nil {
            try queue.write { db in
                try erase(db)
                try dropAnchor(db)
            }
        } else {
            try anchoredWrite(advance: true, erase)
        }
        try truncateWAL()
    }

    /// Copies the WAL into the database and truncates it to nothing: after a delete (which
    /// `secure_delete`, on for every connection, overwrote in the file) no copy stays in the log.
    func truncateWAL() throws {
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// The failed-attempt counter and the time of the last failure.
    public func loadAttempts() throws -> (count: Int, lastFailureAt: Double?) {
        try queue.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT failed, lastFailureAt FROM attempts WHERE id = 1") else {
                return (0, nil)
            }
            return (row["failed"], row["lastFailureAt"])
        }
    }

    /// Durably stores the failed-attempt counter; a count above zero raises the anchor's counter
    /// (a failed attempt is never undone).
    public func saveAttempts(count: Int, lastFailureAt: Double?) throws {
        try anchoredWrite(advance: count > 0) { db in
            try db.execute(
                sql: "INSERT INTO attempts (id, failed, lastFailureAt) VALUES (1, ?, ?)",
                arguments: [count, lastFailureAt])
        }
    }

    /// Why a stored keystore record cannot be read.
    public enum KeystoreError: Error, Sendable, Equatable {
        /// The protection column names a kind this version does not know.
        case unknownProtection(String)
        /// A TPM-protected record without its TPM object.
        case missingHardwareSeal
    }

    /// Runs `PRAGMA integrity_check` and returns its verdict ("ok" when sound).
    public func integrityCheck() throws -> String {
        try queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "no answer" }
    }
}
