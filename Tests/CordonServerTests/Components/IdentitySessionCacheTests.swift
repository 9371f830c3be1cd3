import CordonStore
import Testing

@testable import CordonServer

/// `IdentitySessionCache`: a session read from the store is kept only when no write of sessions
/// started or ended while the read ran, and every write drops what was kept, so `GetToken` on the
/// loop never answers from a session older than the store's.
@Suite struct IdentitySessionCacheTests {
    static func session(_ byte: UInt8) -> StoredIdentitySession {
        StoredIdentitySession(
            provider: "corp", domain: "mail.corp.example", user: nil, domainDisplayName: nil, expiresAt: 100,
            signedInAt: 1, confirmedAt: 1, generation: 0, sealed: [byte])
    }

    @Test func aReadWithNoWriteMeanwhileIsKept() {
        var cache = IdentitySessionCache()
        let epoch = cache.epoch
        cache.keep(Self.session(1), provider: "corp", domain: "mail.corp.example", readAt: epoch)
        #expect(cache.session(provider: "corp", domain: "mail.corp.example") == Self.session(1))
        #expect(cache.session(provider: "corp", domain: "other.example") == nil)
        #expect(cache.session(provider: "other", domain: "mail.corp.example") == nil)
    }

    @Test func aReadDuringAWriteIsNotKept() {
        var cache = IdentitySessionCache()
        // The read starts, then a refresh starts and ends before the read comes back.
        let epoch = cache.epoch
        cache.writing()
        cache.writing()
        cache.keep(Self.session(1), provider: "corp", domain: "mail.corp.example", readAt: epoch)
        #expect(cache.session(provider: "corp", domain: "mail.corp.example") == nil)
        // A read started while the write ran is not kept either, whenever it comes back.
        cache.writing()
        let during = cache.epoch
        cache.writing()
        cache.keep(Self.session(2), provider: "corp", domain: "mail.corp.example", readAt: during)
        #expect(cache.session(provider: "corp", domain: "mail.corp.example") == nil)
    }

    @Test func aWriteDropsWhatWasKeptAndNoSessionIsNotKept() {
        var cache = IdentitySessionCache()
        cache.keep(Self.session(1), provider: "corp", domain: "mail.corp.example", readAt: cache.epoch)
        cache.writing()
        #expect(cache.session(provider: "corp", domain: "mail.corp.example") == nil)
        cache.keep(nil, provider: "corp", domain: "mail.corp.example", readAt: cache.epoch)
        #expect(cache.session(provider: "corp", domain: "mail.corp.example") == nil)
    }
}
