import Foundation
import GRDB

/// A software token as the `token` table holds it: metadata in the clear (what `List` shows) and
/// the seed, PIN and parameters only as `sealed`, a `RecordSealer` record under the tokens purpose
/// key of `generation` (docs/ARCHITECTURE.md, "Tokens").
public struct StoredToken: Sendable, Equatable {
    /// The SecurID serial, or the id the agent gives an OATH token.
    public var serial: String
    /// `securid`, `totp` or `hotp`.
    public var kind: String
    public var nickname: String
    public var digits: Int
    /// Seconds per code (0 for HOTP).
    public var interval: Int
    /// `pinless`, `pinPad`, `keyFob` (SecurID) or `none` (OATH).
    public var pinMode: String
    /// Unix time the token stops working, if it expires.
    public var expiry: Int64?
    /// The key generation the record was sealed under (a reset starts a new one).
    public var generation: Int
    /// The sealed record; never the seed in the clear.
    public var sealed: [UInt8]
    /// HOTP: the counter of the next code. Stored in the clear: knowing it gives no code.
    public var counter: UInt64?
    public var importedAt: Double

    public init(
        serial: String, kind: String, nickname: String, digits: Int, interval: Int, pinMode: String, expiry: Int64?,
        generation: Int, sealed: [UInt8], counter: UInt64?, importedAt: Double
    ) {
        self.serial = serial
        self.kind = kind
        self.nickname = nickname
        self.digits = digits
        self.interval = interval
        self.pinMode = pinMode
        self.expiry = expiry
        self.generation = generation
        self.sealed = sealed
        self.counter = counter
        self.importedAt = importedAt
    }
}

/// What inserting a token did.
public enum TokenInsertOutcome: Sendable, Equatable {
    case inserted
    /// A token with this serial is stored already (nothing changed).
    case duplicate(serial: String)
    /// `maximum` tokens are stored already (nothing changed).
    case limitReached(maximum: Int)
}

/// What inserting a batch of tokens did: all of its new tokens, or none of them.
public enum TokenBatchOutcome: Sendable, Equatable {
    /// The batch's new tokens were stored, in order; `duplicates` are the serials that were stored
    /// already (or came twice in the batch) and were skipped.
    case inserted(serials: [String], duplicates: [String])
    /// The new tokens would take the table past `maximum`: nothing was stored.
    case limitReached(maximum: Int)
}

extension CordonDatabase {
    static func registerTokenMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v5-tokens") { db in
            try db.create(table: "token") { table in
                table.column("serial", .text).primaryKey()
                table.column("kind", .text).notNull()
                table.column("nickname", .text).notNull()
                table.column("digits", .integer).notNull()
                table.column("interval", .integer).notNull()
                table.column("pinMode", .text).notNull()
                table.column("expiry", .integer)
                table.column("generation", .integer).notNull()
                table.column("sealed", .blob).notNull()
                table.column("counter", .integer)
                table.column("importedAt", .double).notNull()
            }
            try db.create(table: "tokenKey") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("generation", .integer).notNull()
            }
        }
    }

    /// The generation of the tokens purpose key (`["tokens", generation]`); 0 until the first reset.
    public func tokenGeneration() throws -> Int {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT generation FROM tokenKey WHERE id = 1") ?? 0 }
    }

    /// Stores `token` unless its serial is stored already or `maximum` tokens are, in one transaction.
    public func insertToken(_ token: StoredToken, maximum: Int) throws -> TokenInsertOutcome {
        switch try insertTokens([token], maximum: maximum) {
        case .inserted(let serials, _) where serials.isEmpty: .duplicate(serial: token.serial)
        case .inserted: .inserted
        case .limitReached(let maximum): .limitReached(maximum: maximum)
        }
    }

    /// Stores the tokens of one import all or nothing, in one transaction: those whose serial is
    /// stored already (or came earlier in the batch) are skipped; when the others would take the
    /// table past `maximum`, none is stored.
    public func insertTokens(_ tokens: [StoredToken], maximum: Int) throws -> TokenBatchOutcome {
        try anchoredWrite(advance: false) { db in
            var fresh: [StoredToken] = []
            var seen: Set<String> = []
            var duplicates: [String] = []
            for token in tokens {
                let stored =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM token WHERE serial = ?", arguments: [token.serial]) == true
                if stored || !seen.insert(token.serial).inserted {
                    duplicates.append(token.serial)
                } else {
                    fresh.append(token)
                }
            }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM token") ?? 0
            if !fresh.isEmpty, count + fresh.count > maximum { return .limitReached(maximum: maximum) }
            for token in fresh {
                try db.execute(
                    sql: """
                        INSERT INTO token (serial, kind, nickname, digits, interval, pinMode, expiry, generation,
                            sealed, counter, importedAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        token.serial, token.kind, token.nickname, token.digits, token.interval, token.pinMode,
                        token.expiry, token.generation, Data(token.sealed), token.counter.map { Int64(bitPattern: $0) },
                        token.importedAt,
                    ])
            }
            return .inserted(serials: fresh.map(\.serial), duplicates: duplicates)
        }
    }

    /// Every stored token, oldest first.
    public func tokens() throws -> [StoredToken] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM token ORDER BY importedAt, serial").map(Self.storedToken)
        }
    }

    /// The token `serial`, if stored.
    public func token(serial: String) throws -> StoredToken? {
        // One statement, its own read transaction (as `AppStorage`'s reads, without GRDB's `read`).
        try writer.inDatabase { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM token WHERE serial = ?"), arguments: [serial])
                .map(Self.storedToken)
        }
    }

    /// Moves an HOTP counter from `expected` to `expected + 1`, durably (`synchronous = FULL`), before
    /// the code of `expected` is handed out; false when the counter was not `expected` (another call
    /// used it) or the token is gone. A crash after this returns can skip a code, never reuse one.
    public func advanceTokenCounter(serial: String, from expected: UInt64) throws -> Bool {
        try anchoredWrite(advance: true) { db in
            try db.execute(
                sql: "UPDATE token SET counter = ? WHERE serial = ? AND counter = ?",
                arguments: [Int64(bitPattern: expected &+ 1), serial, Int64(bitPattern: expected)])
            return db.changesCount == 1
        }
    }

    /// Renames token `serial`; false when it is not stored.
    public func renameToken(serial: String, nickname: String) throws -> Bool {
        try writer.write { db in
            try db.execute(sql: "UPDATE token SET nickname = ? WHERE serial = ?", arguments: [nickname, serial])
            return db.changesCount == 1
        }
    }

    /// Deletes token `serial` (overwritten on disk by `secure_delete`, the WAL truncated); false when
    /// it is not stored.
    public func removeToken(serial: String) throws -> Bool {
        let removed = try anchoredWrite(advance: true) { db in
            try db.execute(sql: "DELETE FROM token WHERE serial = ?", arguments: [serial])
            return db.changesCount == 1
        }
        try truncateLog()
        return removed
    }

    /// Deletes every token and moves to a new key generation (records of the old one can no longer
    /// be opened even if a copy survived); returns the new generation.
    public func resetTokens() throws -> Int {
        let generation = try anchoredWrite(advance: true) { db in
            try db.execute(sql: "DELETE FROM token")
            let next = (try Int.fetchOne(db, sql: "SELECT generation FROM tokenKey WHERE id = 1") ?? 0) + 1
            try db.execute(sql: "INSERT INTO tokenKey (id, generation) VALUES (1, ?)", arguments: [next])
            return next
        }
        try truncateLog()
        return generation
    }

    private func truncateLog() throws {
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    private static func storedToken(_ row: Row) -> StoredToken {
        let sealed: Data = row["sealed"]
        let counter: Int64? = row["counter"]
        return StoredToken(
            serial: row["serial"], kind: row["kind"], nickname: row["nickname"], digits: row["digits"],
            interval: row["interval"], pinMode: row["pinMode"], expiry: row["expiry"], generation: row["generation"],
            sealed: Array(sealed), counter: counter.map { UInt64(bitPattern: $0) }, importedAt: row["importedAt"])
    }
}
