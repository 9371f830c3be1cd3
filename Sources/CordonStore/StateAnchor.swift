import Crypto
import Foundation
import GRDB

/// A counter that only ever goes up: a TPM NV counter (docs/ARCHITECTURE.md, "State anchor").
public protocol MonotonicCounter: Sendable {
    /// The counter's value now.
    func read() throws -> UInt64
    /// Raises the counter by one.
    func increment() throws
}

/// What binds the database's security state to a TPM (docs/ARCHITECTURE.md, "State anchor"): the
/// TPM's NV counter `index`, its authorization, and the TPM-sealed key of the state's MAC.
///
/// The database keeps the counter value its state belongs to and an HMAC, under the sealed key, of
/// that value and every row that must never go back — the keystore, the failed attempts, the
/// accepted policy serials, the tokens' HOTP counters, each app's key and generation. Every event
/// that must never be undone raises the value with the state in one transaction and then raises the
/// TPM's counter: a copy of the database from before (a restored backup) holds a value below the
/// counter, and an edited row no longer matches the HMAC.
public struct StateAnchorReference: Sendable, Equatable {
    /// The NV index of the counter (owner range, chosen at random when the container is made).
    public var index: UInt32
    /// The counter's authValue (random; reads and increments).
    public var authorization: [UInt8]
    /// The state's HMAC key, sealed by the TPM (no passcode: it is checked before any unlock).
    public var keyPublic: [UInt8]
    public var keyPrivate: [UInt8]

    public init(index: UInt32, authorization: [UInt8], keyPublic: [UInt8], keyPrivate: [UInt8]) {
        self.index = index
        self.authorization = authorization
        self.keyPublic = keyPublic
        self.keyPrivate = keyPrivate
    }
}

/// The anchor the agent attached after checking the database against it: the counter and the
/// unsealed HMAC key.
public struct StateAnchor: Sendable {
    public let reference: StateAnchorReference
    public let counter: any MonotonicCounter
    let key: SymmetricKey

    /// `key` is the unsealed HMAC key (copied; the caller zeroes its own copy).
    public init(reference: StateAnchorReference, counter: any MonotonicCounter, key: [UInt8]) {
        self.reference = reference
        self.counter = counter
        self.key = SymmetricKey(data: key)
    }
}

/// Why the database's security state is not trusted (`StateRolledBack`, docs/THREAT-MODEL.md).
public enum StateAnchorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The state belongs to an older value of the TPM's counter: a copy from before an event that
    /// must never be undone (a wipe, an HOTP code, a failed attempt, a policy serial).
    case rolledBack(stored: UInt64, counter: UInt64)
    /// A row of the state was changed outside the agent: the HMAC does not match.
    case tampered
    /// The keystore names an anchor and the database holds none (or another one).
    case missing
    /// The anchor was not checked yet (no TPM answered).
    case unverified(String)
    /// The TPM's counter could not be read or raised.
    case counterFailed(String)
    /// The TPM no longer holds the anchor (it was cleared or replaced, or the counter removed):
    /// only the recovery key restores the container, under a new anchor.
    case lost(String)

    public var description: String {
        switch self {
        case .rolledBack(let stored, let counter):
            return
                "the database is older than the TPM's counter (state \(stored), counter \(counter)): a copy from before a wipe, a code, a failed attempt or a policy update was put back"
        case .tampered: return "the security state was changed outside the agent (its MAC does not match)"
        case .missing: return "the keystore is anchored to the TPM and the database holds no anchor (removed)"
        case .unverified(let reason): return "the state could not be checked against the TPM: \(reason)"
        case .counterFailed(let reason): return "the TPM's counter failed: \(reason)"
        case .lost(let reason):
            return
                "the TPM no longer holds the counter that anchors the state (cleared or replaced?): \(reason); restore with the recovery key, `cordon init --recovery`"
        }
    }
}

/// Whether and how this database's writes are anchored.
enum AnchorMode: Sendable {
    /// No anchor: no TPM protects the state (or the container predates it).
    case none
    /// Checked and attached: writes of the state are MAC'd and raise the counter.
    case attached(StateAnchor)
    /// The keystore is anchored but the anchor is not usable: writes of the state are refused.
    case refused(StateAnchorError)
}

extension CordonDatabase {
    static func registerStateAnchorMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v7-state-anchor") { db in
            try db.create(table: "stateAnchor") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("nvIndex", .integer).notNull()
                table.column("nvAuth", .blob).notNull()
                table.column("keyPublic", .blob).notNull()
                table.column("keyPrivate", .blob).notNull()
                table.column("value", .integer).notNull()
                table.column("mac", .blob).notNull()
            }
            try db.alter(table: "keystore") { table in
                table.add(column: "anchorIndex", .integer)
            }
        }
    }

    /// The anchor the database holds, if any (the row the agent checks before trusting the state).
    public func loadAnchorReference() throws -> StateAnchorReference? {
        try writer.read { db in try Self.anchorReference(db) }
    }

    static func anchorReference(_ db: Database) throws -> StateAnchorReference? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM stateAnchor WHERE id = 1") else { return nil }
        return StateAnchorReference(
            index: UInt32(truncatingIfNeeded: row["nvIndex"] as Int64), authorization: Array(row["nvAuth"] as Data),
            keyPublic: Array(row["keyPublic"] as Data), keyPrivate: Array(row["keyPrivate"] as Data))
    }

    /// The anchored state now: nil when no anchor is attached, else whether it is refused.
    public var anchorProblem: StateAnchorError? {
        switch anchorMode.withLock({ $0 }) {
        case .none, .attached: return nil
        case .refused(let error): return error
        }
    }

    /// The anchor attached now (writes of the state are MAC'd and raise its counter).
    public var attachedAnchor: StateAnchor? {
        if case .attached(let anchor) = anchorMode.withLock({ $0 }) { return anchor }
        return nil
    }

    /// Called (on the writing thread) when a write finds the state edited while the agent runs: the
    /// agent logs and audits it.
    public func onStateRefused(_ handler: @escaping @Sendable (StateAnchorError) -> Void) {
        onRefusal.withLock { $0 = handler }
    }

    /// Refuses every write of the state until an anchor is attached (the keystore is anchored and
    /// the anchor could not be checked, or did not hold).
    public func refuseState(_ error: StateAnchorError) {
        anchorMode.withLock { $0 = .refused(error) }
    }

    /// Checks the stored state against `anchor` — its HMAC, and its value against the TPM's counter
    /// — then attaches it: from now on every write of the state is MAC'd. A value above the counter
    /// is an event whose counter raise a crash cut short: the counter catches up.
    public func attach(_ anchor: StateAnchor) throws(StateAnchorError) {
        let stored: (value: UInt64, mac: [UInt8])?
        do {
            stored = try writer.read { db -> (UInt64, [UInt8])? in
                guard let row = try Row.fetchOne(db, sql: "SELECT value, mac FROM stateAnchor WHERE id = 1"),
                    try Self.anchorReference(db) == anchor.reference
                else { return nil }
                let value = UInt64(bitPattern: row["value"] as Int64)
                let mac = Array(row["mac"] as Data)
                guard try Self.mac(db, value: value, key: anchor.key) == mac else { throw StateAnchorError.tampered }
                return (value, mac)
            }
        } catch let error as StateAnchorError {
            refuseState(error)
            throw error
        } catch {
            refuseState(.unverified("\(error)"))
            throw .unverified("\(error)")
        }
        guard let stored else {
            refuseState(.missing)
            throw .missing
        }
        do {
            var counter = try anchor.counter.read()
            guard stored.value >= counter else {
                refuseState(.rolledBack(stored: stored.value, counter: counter))
                throw StateAnchorError.rolledBack(stored: stored.value, counter: counter)
            }
            while counter < stored.value {
                try anchor.counter.increment()
                counter += 1
            }
        } catch let error as StateAnchorError {
            throw error
        } catch {
            refuseState(.counterFailed("\(error)"))
            throw .counterFailed("\(error)")
        }
        anchorMode.withLock { $0 = .attached(anchor) }
    }

    /// Makes `anchor` the database's anchor (a new container, or one made before anchors) at the
    /// counter's value now, in the transaction of `body` — the keystore that names it.
    public func establish<T>(_ anchor: StateAnchor, _ body: (Database) throws -> T) throws -> T {
        let value = try anchor.counter.read()
        let result = try writer.write { db in
            let result = try body(db)
            let reference = anchor.reference
            try db.execute(
                sql: """
                    INSERT INTO stateAnchor (id, nvIndex, nvAuth, keyPublic, keyPrivate, value, mac)
                    VALUES (1, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    Int64(reference.index), Data(reference.authorization), Data(reference.keyPublic),
                    Data(reference.keyPrivate), Int64(bitPattern: value),
                    Data(try Self.mac(db, value: value, key: anchor.key)),
                ])
            return result
        }
        anchorMode.withLock { $0 = .attached(anchor) }
        return result
    }

    /// Runs `body` (a write of the state) in one transaction with the anchor: the stored HMAC is
    /// checked first (an edit made while the agent runs is caught here), and rewritten over the new
    /// state; `advance` raises the value, and the TPM's counter after the commit, so nothing
    /// written before can come back. Without an anchor, a plain write; with a refused one, refused.
    func anchoredWrite<T>(advance: Bool, _ body: (Database) throws -> T) throws -> T {
        let anchor: StateAnchor
        switch anchorMode.withLock({ $0 }) {
        // A lost anchor protects nothing any more: only the recovery key opens, and it makes a new one.
        case .none, .refused(.lost): return try writer.write(body)
        case .refused(let error): throw error
        case .attached(let attached): anchor = attached
        }
        let (result, advanced): (T, Bool)
        do {
            (result, advanced) = try anchoredTransaction(anchor: anchor, advance: advance, body)
        } catch let error as StateAnchorError {
            // An edit made while the agent runs: from now on the state is refused, as at a start.
            refuseState(error)
            onRefusal.withLock { $0 }?(error)
            throw error
        }
        if advanced {
            do {
                try anchor.counter.increment()
            } catch {
                // The state is ahead of the counter: the next start catches the counter up.
                throw StateAnchorError.counterFailed("\(error)")
            }
        }
        return result
    }

    private func anchoredTransaction<T>(anchor: StateAnchor, advance: Bool, _ body: (Database) throws -> T) throws
        -> (T, Bool)
    {
        try writer.write { db -> (T, Bool) in
            guard let row = try Row.fetchOne(db, sql: "SELECT value, mac FROM stateAnchor WHERE id = 1") else {
                throw StateAnchorError.missing
            }
            var value = UInt64(bitPattern: row["value"] as Int64)
            guard try Self.mac(db, value: value, key: anchor.key) == Array(row["mac"] as Data) else {
                throw StateAnchorError.tampered
            }
            let result = try body(db)
            if advance { value += 1 }
            try db.execute(
                sql: "UPDATE stateAnchor SET value = ?, mac = ? WHERE id = 1",
                arguments: [Int64(bitPattern: value), Data(try Self.mac(db, value: value, key: anchor.key))])
            return (result, advance)
        }
    }

    /// Forgets the anchor of a container that holds no keystore (its state protects nothing; the
    /// next `Initialize` makes a new anchor).
    public func forgetAnchor() throws {
        try writer.write { db in try dropAnchor(db) }
    }

    /// Forgets the anchor (a full wipe of a container whose state was refused: nothing of it is
    /// trusted, and the next `Initialize` makes a new one).
    func dropAnchor(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM stateAnchor")
        anchorMode.withLock { $0 = .none }
    }

    /// HMAC-SHA256 under `key` of the value and a digest of every row of the anchored state.
    static func mac(_ db: Database, value: UInt64, key: SymmetricKey) throws -> [UInt8] {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array("cordon.state.v1".utf8))
        withUnsafeBytes(of: value.bigEndian) { hmac.update(data: Array($0)) }
        for (table, columns, order) in anchoredTables {
            guard try db.tableExists(table) else { continue }
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(order)")
            update(&hmac, "t", Array(table.utf8))
            update(&hmac, "c", Array(String(rows.count).utf8))
            for row in rows {
                for column in columns { update(&hmac, row[column] as DatabaseValue) }
            }
        }
        return Array(hmac.finalize())
    }

    /// The tables and columns of the anchored state (what must never go back), each in a fixed order.
    static let anchoredTables: [(String, [String], String)] = [
        (
            "keystore",
            [
                "version", "kdfRounds", "kdfBlockSize", "kdfParallelism", "salt", "sealed", "protection", "tpmPublic",
                "tpmPrivate", "tpmPCRs", "recoverySealed", "anchorIndex",
            ], "id"
        ),
        ("attempts", ["failed", "lastFailureAt"], "id"),
        ("policySerial", ["name", "serial"], "name"),
        ("token", ["serial", "kind", "generation", "sealed", "counter"], "serial"),
        ("tokenKey", ["generation"], "id"),
        ("appGeneration", ["appId", "generation"], "appId"),
        ("appKey", ["appId", "wrapped"], "appId"),
    ]

    /// One column's value into the digest: its type, its length and its bytes, so no two values meet.
    private static func update(_ hmac: inout HMAC<SHA256>, _ value: DatabaseValue) {
        switch value.storage {
        case .null: update(&hmac, "n", [])
        case .int64(let number): update(&hmac, "i", Array(String(number).utf8))
        case .double(let number): update(&hmac, "d", Array(String(number.bitPattern).utf8))
        case .string(let text): update(&hmac, "s", Array(text.utf8))
        case .blob(let data): update(&hmac, "b", Array(data))
        }
    }

    private static func update(_ hmac: inout HMAC<SHA256>, _ tag: Character, _ bytes: [UInt8]) {
        hmac.update(data: [tag.asciiValue ?? 0])
        withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { hmac.update(data: Array($0)) }
        hmac.update(data: bytes)
    }
}
