import Foundation
import GRDB

/// A signed-in session as the `identitySession` table holds it: one row per provider and domain,
/// shared by every app of the domain's access groups (docs/ARCHITECTURE.md, "Identity").
///
/// The tokens (access, refresh, ID) are only in `sealed`: a `RecordSealer` record under the
/// identity purpose key of `generation`, with the provider and domain as associated data. What is
/// in the clear is what `cordon identity status` shows: the user name, expiry and times.
public struct StoredIdentitySession: Sendable, Equatable {
    public var provider: String
    public var domain: String
    /// The signed-in user's display name, when the provider told it (never a token).
    public var user: String?
    /// Unix time the access token expires.
    public var expiresAt: Double
    /// Unix time of the sign-in.
    public var signedInAt: Double
    /// Unix time the provider last issued or refreshed the tokens (the offline limits count from it).
    public var confirmedAt: Double
    /// The identity key generation the record was sealed under (a wipe starts a new one).
    public var generation: Int
    /// The sealed tokens.
    public var sealed: [UInt8]

    public init(
        provider: String, domain: String, user: String?, expiresAt: Double, signedInAt: Double, confirmedAt: Double,
        generation: Int, sealed: [UInt8]
    ) {
        self.provider = provider
        self.domain = domain
        self.user = user
        self.expiresAt = expiresAt
        self.signedInAt = signedInAt
        self.confirmedAt = confirmedAt
        self.generation = generation
        self.sealed = sealed
    }

    /// The slot (associated data) a session's record is sealed under.
    public static func slot(provider: String, domain: String) -> [String] { ["identity", provider, domain] }
}

extension CordonDatabase {
    static func registerIdentityMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("identity-v1-sessions") { db in
            try db.create(table: "identitySession") { table in
                table.column("provider", .text).notNull()
                table.column("domain", .text).notNull()
                table.column("user", .text)
                table.column("expiresAt", .double).notNull()
                table.column("signedInAt", .double).notNull()
                table.column("confirmedAt", .double).notNull()
                table.column("generation", .integer).notNull()
                table.column("sealed", .blob).notNull()
                table.primaryKey(["provider", "domain"])
            }
            try db.create(table: "identityKey") { table in
                table.column("id", .integer).primaryKey(onConflict: .replace)
                table.column("generation", .integer).notNull()
            }
        }
    }

    /// The generation of the identity purpose key (`["identity", generation]`); 0 until the first reset.
    public func identityGeneration() throws -> Int {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT generation FROM identityKey WHERE id = 1") ?? 0 }
    }

    /// Stores `session`, replacing the one of its provider and domain (a sign-in or a refresh) in one
    /// transaction: the rotated refresh token replaces the old one, never both kept, never neither.
    public func storeIdentitySession(_ session: StoredIdentitySession) throws {
        try writer.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO identitySession (provider, domain, user, expiresAt, signedInAt, confirmedAt,
                        generation, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.provider, session.domain, session.user, session.expiresAt, session.signedInAt,
                    session.confirmedAt, session.generation, Data(session.sealed),
                ])
        }
    }

    /// Every stored session, by provider and domain.
    public func identitySessions() throws -> [StoredIdentitySession] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM identitySession ORDER BY provider, domain").map(
                Self.identitySession)
        }
    }

    /// The session of `provider` for `domain`, if stored.
    public func identitySession(provider: String, domain: String) throws -> StoredIdentitySession? {
        try writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM identitySession WHERE provider = ? AND domain = ?",
                arguments: [provider, domain]
            ).map(Self.identitySession)
        }
    }

    /// Deletes the sessions of `provider` (every session when nil), overwritten on disk by
    /// `secure_delete` and the WAL truncated; returns how many were deleted.
    @discardableResult
    public func removeIdentitySessions(provider: String?) throws -> Int {
        let removed = try writer.write { db in
            if let provider {
                try db.execute(sql: "DELETE FROM identitySession WHERE provider = ?", arguments: [provider])
            } else {
                try db.execute(sql: "DELETE FROM identitySession")
            }
            return db.changesCount
        }
        try truncateIdentityLog()
        return removed
    }

    /// Deletes every session and moves to a new key generation (a wipe): a surviving copy of an old
    /// record can no longer be opened. Returns the new generation.
    public func resetIdentity() throws -> Int {
        let generation = try writer.write { db in
            try db.execute(sql: "DELETE FROM identitySession")
            let next = (try Int.fetchOne(db, sql: "SELECT generation FROM identityKey WHERE id = 1") ?? 0) + 1
            try db.execute(sql: "INSERT INTO identityKey (id, generation) VALUES (1, ?)", arguments: [next])
            return next
        }
        try truncateIdentityLog()
        return generation
    }

    private func truncateIdentityLog() throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    private static func identitySession(_ row: Row) -> StoredIdentitySession {
        let sealed: Data = row["sealed"]
        return StoredIdentitySession(
            provider: row["provider"], domain: row["domain"], user: row["user"], expiresAt: row["expiresAt"],
            signedInAt: row["signedInAt"], confirmedAt: row["confirmedAt"], generation: row["generation"],
            sealed: Array(sealed))
    }
}
