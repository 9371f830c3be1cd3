import CordonLocking
import CordonProtocol
import CordonStore
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `Tokens.Code` on the loop (issue #31): a TOTP token's second code is answered synchronously,
/// from the held sealed record, with no trip to the store pool; an HOTP token never is (its
/// counter reaches the disk first); a removal drops what is held, so no code of a removed token is
/// answered; and the read's audit record is queued after the reply.
@Suite struct TokenCodeCacheTests {
    typealias Fixture = TokensComponentTests.Fixture

    /// Calls `Code` and says whether the component answered it synchronously (`.reply`), i.e. on
    /// the loop without the store pool.
    static func code(_ serial: String, at time: Double, in fixture: Fixture) async throws -> (JSONValue, Bool) {
        try await fixture.run { host, _, _ in host.now = time }
        let synchronous = Locked(false)
        let reply = try await fixture.call(.tokenCode, ["serial": .string(serial)]) { tokens, call in
            let outcome = try tokens.serve(.code, call)
            if case .reply = outcome { synchronous.withLock { $0 = true } }
            return outcome
        }
        return (reply, synchronous.withLock { $0 })
    }

    @Test func aHeldTOTPIsAnsweredOnTheLoopAndAudited() async throws {
        try await TokensComponentTests.with { fixture in
            let serial = try await TokensComponentTests.importToken(fixture)
            let (first, firstOnLoop) = try await Self.code(serial, at: 59, in: fixture)
            #expect(first["parameters"]?["code"] == .string("94287082"))
            #expect(!firstOnLoop, "the first read goes to the store")
            // RFC 6238's vectors, now from the held record.
            let (second, secondOnLoop) = try await Self.code(serial, at: 1_111_111_109, in: fixture)
            #expect(second["parameters"]?["code"] == .string("07081804"))
            #expect(secondOnLoop, "a held TOTP record is answered without the pool")
            let audit = try await fixture.run { host, _, _ in
                host.audit.filter { $0.action == "tokens.code" }.map(\.outcome)
            }
            #expect(audit == ["allow", "allow"])
        }
    }

    @Test func anHOTPCodeAlwaysGoesThroughTheStore() async throws {
        try await TokensComponentTests.with { fixture in
            let uri = "otpauth://hotp/ACME:bob?secret=\(TokensComponentTests.seed)&issuer=ACME&counter=0"
            let (_, imported) = try await fixture.callAuthorized(
                .tokenImport, ["data": .string(uri), "passcode": .string("2468")]
            ) { try $0.serve(.import, $1) }
            let parameters = try #require(imported["parameters"])
            let serial = try #require(parameters.decoded(as: TokenListReply.self).tokens.first?.serial)
            // RFC 4226, appendix D: counters 0, 1 and 2, each stored past before its code.
            for expected in ["755224", "287082", "359152"] {
                let (reply, onLoop) = try await Self.code(serial, at: 59, in: fixture)
                #expect(reply["parameters"]?["code"] == .string(expected))
                #expect(!onLoop)
            }
            #expect(try await fixture.run { _, tokens, _ in tokens.codeCache[serial: serial] == nil })
        }
    }

    @Test func aRemovedTokenHasNoCodeEvenWhenItWasHeld() async throws {
        try await TokensComponentTests.with { fixture in
            let serial = try await TokensComponentTests.importToken(fixture)
            _ = try await Self.code(serial, at: 59, in: fixture)
            #expect(try await fixture.run { _, tokens, _ in tokens.codeCache[serial: serial] != nil })
            let (_, removed) = try await fixture.callAuthorized(
                .tokenRemove, ["serial": .string(serial), "passcode": .string("2468")]
            ) { try $0.serve(.remove, $1) }
            #expect(removed["error"] == nil, "\(removed)")
            let (after, _) = try await Self.code(serial, at: 59, in: fixture)
            #expect(after["error"] == .string("io.cordon.Tokens.TokenNotFound"), "\(after)")
        }
    }

    @Test func aPoolReadThatRacedAChangeIsNotKept() {
        var cache = TokenCodeCache()
        let stored = StoredToken(
            serial: "s", kind: "totp", nickname: "n", digits: 6, interval: 30, pinMode: "none", expiry: nil,
            generation: 0, sealed: [1, 2, 3], counter: nil, importedAt: 0)
        let started = cache.epoch
        cache.invalidate()
        cache.keep(stored, readIn: started)
        #expect(cache[serial: "s"] == nil)
        cache.keep(stored, readIn: cache.epoch)
        #expect(cache[serial: "s"] == stored)
        var counted = stored
        counted.counter = 3
        cache.keep(counted, readIn: cache.epoch)
        #expect(cache[serial: "s"] == stored, "a record with a counter is never held")
    }
}
