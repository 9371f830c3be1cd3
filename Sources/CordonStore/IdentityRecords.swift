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
    /// The CPA domain's name to show the user (`domain_display_name`); nil for OAuth 2.0.
    public var domainDisplayName: String?
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
        provider: String, domain: String, user: String?, domainDisplayName: String? = nil, expiresAt: Double,
        signedInAt: Double, confirmedAt: Double, generation: Int, sealed: [UInt8]
    ) {
        self.provider = provider
        self.domain = domain
        self.user = user
        self.domainDisplayName = domainDisplayName
        self.expiresAt = expiresAt
        self.signedInAt = signedInAt
        self.confirmedAt = confirmedAt
        self.generation = generation
        self.sealed = sealed
    }

    /// The slot (associated data) a session's record is sealed under.
    public static func slot(provider: String, domain: String) -> [String] { ["identity", provider, domain] }
}

/// The client id and secret a CPA provider's `/register` gave this device, as the
/// `identityCPAClient` table holds them: one row per provider, the credentials only in `sealed`
/// (a `RecordSealer` record under the identity purpose key of `generation`, with
/// ``slot(provider:)`` as associated data), deleted on sign-out and wipe (docs/ARCHITECTURE.md,
/// "Identity").
public struct StoredCPAClient: Sendable, Equatable {
    public var provider: String
    public var generation: Int
    public var sealed: [UInt8]

    public init(provider: String, generation: Int, sealed: [UInt8]) {
        self.provider = provider
        self.generation = generation
        self.sealed = sealed
    }

    /// The slot (associated data) the credentials are sealed under.
    public static func slot(provider: String) -> [String] { ["identity-cpa-client", provider] }
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
        // CPA (ETSI TS 103 407): the domain's display name beside the user name, and the client
        // credentials `/register` gave the device, one sealed record per provider.
        migrator.registerMigration("identity-v2-cpa") { db in
            try db.alter(table: "identitySession") { table in table.add(column: "domainDisplayName", .text) }
            try db.create(table: "identityCPAClient") { table in
                table.column("provider", .text).primaryKey()
                table.column("generation", .integer).notNull()
                table.column("sealed", .blob).notNull()
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
                    INSERT OR REPLACE INTO identitySession (provider, domain, user, domainDisplayName, expiresAt,
                        signedInAt, confirmedAt, generation, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.provider, session.domain, session.user, session.domainDisplayName, session.expiresAt,
                    session.signedInAt, session.confirmedAt, session.generation, Data(session.sealed),
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
        // One statement, its own read transaction (as `AppStorage`'s reads, without GRDB's `read`).
        try writer.inDatabase { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM identitySession WHERE provider = ? AND domain = ?"),
                arguments: [provider, domain]
            ).map(Self.identitySession)
        }
    }

    /// Deletes the sessions of `provider` (every session when nil) and its CPA client credentials,
    /// overwritten on disk by `secure_delete` and the WAL truncated; returns how many sessions were
    /// deleted.
    @discardableResult
    public func removeIdentitySessions(provider: String?) throws -> Int {
        let removed = try writer.write { db in
            let count: Int
            if let provider {
                try db.execute(sql: "DELETE FROM identitySession WHERE provider = ?", arguments: [provider])
                count = db.changesCount
                try db.execute(sql: "DELETE FROM identityCPAClient WHERE provider = ?", arguments: [provider])
            } else {
                try db.execute(sql: "DELETE FROM identitySession")
                count = db.changesCount
                try db.execute(sql: "DELETE FROM identityCPAClient")
            }
            return count
        }
        try truncateIdentityLog()
        return removed
    }

    /// Deletes every session and moves to a new key generation (a wipe): a surviving copy of an old
    /// record can no longer be opened. Returns the new generation.
    public func resetIdentity() throws -> Int {
        let generation = try writer.write { db in
            try db.execute(sql: "DELETE FROM identitySession")
            try db.execute(sql: "DELETE FROM identityCPAClient")
            let next = (try Int.fetchOne(db, sql: "SELECT generation FROM identityKey WHERE id = 1") ?? 0) + 1
            try db.execute(sql: "INSERT INTO identityKey (id, generation) VALUES (1, ?)", arguments: [next])
            return next
        }
        try truncateIdentityLog()
        return generation
    }

    /// Stores the sealed CPA client credentials of `provider` (replacing any).
    public func storeCPAClient(_ client: StoredCPAClient) throws {
        try writer.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO identityCPAClient (provider, generation, sealed) VALUES (?, ?, ?)",
                arguments: [client.provider, client.generation, Data(client.sealed)])
        }
    }

    /// The sealed CPA client credentials of `provider`, if stored.
    public func cpaClient(provider: String) throws -> StoredCPAClient? {
        try writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM identityCPAClient WHERE provider = ?", arguments: [provider]
            ).map { row in
                let sealed: Data = row["sealed"]
                return StoredCPAClient(provider: row["provider"], generation: row["generation"], sealed: Array(sealed))
            }
        }
    }

    private func truncateIdentityLog() throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    private static func identitySession(_ row: Row) -> StoredIdentitySession {
        let sealed: Data = row["sealed"]
        return StoredIdentitySession(
            provider: row["provider"], domain: row["domain"], user: row["user"],
            domainDisplayName: row["domainDisplayName"], expiresAt: row["expiresAt"],
            signedInAt: row["signedInAt"], confirmedAt: row["confirmedAt"], generation: row["generation"],
            sealed: Array(sealed))
    }
}
