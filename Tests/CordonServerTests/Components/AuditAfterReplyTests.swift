import CordonProtocol
import CordonStore
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// Routine reads' audit records after the reply (issue #31): queued without a write, stored in
/// one group commit when anyone waits for the log (a query included), at a lock, and at once when
/// a batch's worth waits; past the bound, the reply waits for its record instead.
@Suite struct AuditAfterReplyTests {
    typealias Fixture = AuditLogComponentTests.Fixture

    static func stored(_ fixture: Fixture) async throws -> [String] {
        try await fixture.run { host, _, _ throws in
            try host.database.queryAudit(AuditQuery(since: nil, appId: nil, limit: 10_000)).compactMap(\.action)
        }
    }

    static func reads(_ count: Int) -> [AuditEntry] {
        (0..<count).map { AuditLogComponentTests.record("com.example.notes", "tokens.code", at: Double($0)) }
    }

    @Test func aReadsRecordIsQueuedAndAQuerySeesIt() async throws {
        try await AuditLogComponentTests.with { fixture in
            let (waits, queued) = try await fixture.run { _, log, _ in
                (log.writeAfterReply(Self.reads(1)) != nil, log.waitingAfterReply)
            }
            #expect(!waits, "the reply leaves at once")
            #expect(queued == 1)
            // A query stores what was queued before it, and answers it.
            let reply = try await fixture.call(.queryAudit) { try $0.serve(.query, $1) }
            #expect(reply["parameters"]?["records"].map(AuditLogComponentTests.actions) == ["tokens.code"])
            #expect(try await fixture.run { _, log, _ in log.waitingAfterReply } == 0)
        }
    }

    @Test func aLockStoresWhatWaits() async throws {
        try await AuditLogComponentTests.with { fixture in
            try await fixture.run { _, log, _ in
                _ = log.writeAfterReply(Self.reads(3))
                log.observe(
                    CordonEvent(seq: 2, payload: .didLock, reason: .userRequest, time: 0, state: .lockedKeyHeld))
            }
            #expect(try await fixture.run { _, log, _ in log.waitingAfterReply } == 0)
            try await fixture.run { _, log, _ in log.stored() }.get()
            #expect(try await Self.stored(fixture).count == 3)
        }
    }

    @Test func aBatchsWorthIsCommittedWithoutWaitingForTheDelay() async throws {
        try await AuditLogComponentTests.with { fixture in
            let waiting = try await fixture.run { _, log, _ in
                _ = log.writeAfterReply(Self.reads(AuditLogComponent.afterReplyBatch - 1))
                let before = log.waitingAfterReply
                _ = log.writeAfterReply(Self.reads(1))
                return [before, log.waitingAfterReply]
            }
            #expect(waiting == [AuditLogComponent.afterReplyBatch - 1, 0])
        }
    }

    @Test func pastTheBoundTheReplyWaitsForItsRecord() async throws {
        try await AuditLogComponentTests.with { fixture in
            let waits = try await fixture.run { _, log, _ -> [Bool] in
                // Under the bound: queued (a batch's worth at a time goes to the store).
                var waits: [Bool] = []
                for _ in 0..<(AuditLogComponent.maxQueued / AuditLogComponent.afterReplyBatch) {
                    waits.append(log.writeAfterReply(Self.reads(AuditLogComponent.afterReplyBatch - 1)) != nil)
                }
                // One write is in flight; what waits behind it is at the bound.
                waits.append(log.writeAfterReply(Self.reads(AuditLogComponent.afterReplyBatch)) != nil)
                return waits
            }
            #expect(waits.dropLast().allSatisfy { !$0 })
            #expect(waits.last == true, "\(waits)")
            try await fixture.run { _, log, _ in log.stored() }.get()
            let count = try await Self.stored(fixture).count
            #expect(count == 16 * (AuditLogComponent.afterReplyBatch - 1) + AuditLogComponent.afterReplyBatch)
        }
    }
}
