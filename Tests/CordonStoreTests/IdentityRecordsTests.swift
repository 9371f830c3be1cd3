import CordonSecrets
import CordonStore
import Foundation
import Testing

/// The `identitySession` table: sealed tokens only, one session per provider and domain replaced
/// whole on refresh, sign-out and wipe that leave nothing to open.
@Suite struct IdentityRecordsTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-identity-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    func sealer(generation: Int) -> RecordSealer {
        let master = SecureBytes(copying: [UInt8](repeating: 9, count: 32))
        return RecordSealer(key: KeyCustody().purposeKey(master: master, purpose: ["identity", String(generation)]))
    }

    /// A session whose sealed record holds `tokens` (the JSON the agent seals).
    func session(_ provider: String, _ domain: String, tokens: String, generation: Int = 0) throws
        -> StoredIdentitySession
    {
        let sealed = try sealer(generation: generation).seal(
            Array(tokens.utf8), slot: StoredIdentitySession.slot(provider: provider, domain: domain))
        return StoredIdentitySession(
            provider: provider, domain: domain, user: "alice", expiresAt: 3600, signedInAt: 1, confirmedAt: 1,
            generation: generation, sealed: sealed)
    }

    @Test func theDatabaseAndItsWALHoldNoTokenInTheClear() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let access = "ACCESS-TOKEN-0123456789abcdef"
        let refresh = "REFRESH-TOKEN-fedcba9876543210"
        let tokens = #"{"accessToken":"\#(access)","refreshToken":"\#(refresh)"}"#
        try database.storeIdentitySession(try session("corp", "corp.example", tokens: tokens))
        for file in CordonDatabase.files(of: path) where FileManager.default.fileExists(atPath: file) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            for secret in [access, refresh, "0123456789abcdef", "fedcba9876543210"] {
                #expect(bytes.firstRange(of: Array(secret.utf8)) == nil, "\(file) holds \(secret)")
            }
        }
        let stored = try #require(try database.identitySession(provider: "corp", domain: "corp.example"))
        #expect(stored.user == "alice")
        let slot = StoredIdentitySession.slot(provider: "corp", domain: "corp.example")
        let opened = try sealer(generation: 0).open(stored.sealed, slot: slot)
        #expect(opened.withUnsafeBytes { Array($0) } == Array(tokens.utf8))
        // A record copied to another provider or domain, or opened under the next generation, does not open.
        #expect(throws: RecordSealError.tampered) {
            try sealer(generation: 0).open(
                stored.sealed, slot: StoredIdentitySession.slot(provider: "corp", domain: "x.example"))
        }
        #expect(throws: RecordSealError.tampered) {
            try sealer(generation: 0).open(
                stored.sealed, slot: StoredIdentitySession.slot(provider: "evil", domain: "corp.example"))
        }
        #expect(throws: RecordSealError.tampered) { try sealer(generation: 1).open(stored.sealed, slot: slot) }
    }

    @Test func aRefreshReplacesTheSessionWhole() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        try database.storeIdentitySession(try session("corp", "corp.example", tokens: "first"))
        var next = try session("corp", "corp.example", tokens: "second")
        next.confirmedAt = 500
        try database.storeIdentitySession(next)
        let sessions = try database.identitySessions()
        #expect(sessions.count == 1)
        #expect(sessions.first == next)
    }

    @Test func signOutRemovesOneProviderOrAllAndAWipeMovesTheGeneration() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        try database.storeIdentitySession(try session("corp", "corp.example", tokens: "a"))
        try database.storeIdentitySession(try session("corp", "mail.example", tokens: "b"))
        try database.storeIdentitySession(try session("other", "other.example", tokens: "c"))
        #expect(try database.removeIdentitySessions(provider: "corp") == 2)
        #expect(try database.identitySessions().map(\.provider) == ["other"])
        #expect(try database.identityGeneration() == 0)
        #expect(try database.resetIdentity() == 1)
        #expect(try database.identitySessions().isEmpty)
        #expect(try database.identityGeneration() == 1)
        #expect(try database.removeIdentitySessions(provider: nil) == 0)
    }

    @Test func cpaClientCredentialsAreSealedPerProviderAndGoWithSignOutAndWipe() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let secret = "CPA-CLIENT-SECRET-0123456789"
        let credentials = #"{"clientID":"407","clientSecret":"\#(secret)"}"#
        for provider in ["ebu", "rts"] {
            let sealed = try sealer(generation: 0).seal(
                Array(credentials.utf8), slot: StoredCPAClient.slot(provider: provider))
            try database.storeCPAClient(StoredCPAClient(provider: provider, generation: 0, sealed: sealed))
        }
        try database.storeIdentitySession(
            StoredIdentitySession(
                provider: "ebu", domain: "cpa.ebu.ch", user: "james", domainDisplayName: "EBU - CPA demo",
                expiresAt: 3600, signedInAt: 1, confirmedAt: 1, generation: 0,
                sealed: try session("ebu", "cpa.ebu.ch", tokens: "{}").sealed))
        for file in CordonDatabase.files(of: path) where FileManager.default.fileExists(atPath: file) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(bytes.firstRange(of: Array(secret.utf8)) == nil, "\(file) holds the client secret")
        }
        #expect(
            try database.identitySession(provider: "ebu", domain: "cpa.ebu.ch")?.domainDisplayName == "EBU - CPA demo")
        let stored = try #require(try database.cpaClient(provider: "ebu"))
        let opened = try sealer(generation: 0).open(stored.sealed, slot: StoredCPAClient.slot(provider: "ebu"))
        #expect(opened.withUnsafeBytes { Array($0) } == Array(credentials.utf8))
        // Another provider's slot, or a session's, does not open it.
        #expect(throws: RecordSealError.tampered) {
            try sealer(generation: 0).open(stored.sealed, slot: StoredCPAClient.slot(provider: "rts"))
        }
        #expect(throws: RecordSealError.tampered) {
            try sealer(generation: 0).open(
                stored.sealed, slot: StoredIdentitySession.slot(provider: "ebu", domain: "cpa.ebu.ch"))
        }
        // Sign-out of one provider deletes its credentials with its sessions; a wipe deletes the rest.
        #expect(try database.removeIdentitySessions(provider: "ebu") == 1)
        #expect(try database.cpaClient(provider: "ebu") == nil)
        #expect(try database.cpaClient(provider: "rts") != nil)
        #expect(try database.resetIdentity() == 1)
        #expect(try database.cpaClient(provider: "rts") == nil)
    }
}
