import CordonProtocol
import Foundation
import Testing

@testable import CordonFleet

/// The doorbell: a ring is only a hint. A forged, expired, oversized or replayed timestamp schedules
/// nothing; a genuine newer one schedules one poll after a random delay, joined by later rings, and
/// doorbell polls stay `minimumSpacing` apart however fast rings come.
@Suite struct FleetDoorbellTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    /// A root whose timestamp role is `timestamp`'s key, trusted with timestamp v`trustedVersion`.
    struct Repository {
        let rootKey = TUFSigningKey()
        let timestampKey = TUFSigningKey()
        let trusted: TUFTrustedSet

        init(trustedVersion: Int) throws {
            let roles = ["root": rootKey, "timestamp": timestampKey, "snapshot": rootKey, "targets": rootKey]
            let root = TUFWriter.root(
                version: 1, expires: FleetDoorbellTests.now.addingTimeInterval(86_400 * 365),
                keys: [rootKey.publicKey, timestampKey.publicKey],
                roles: roles.mapValues { TUFRoleKeys(keyIDs: [$0.publicKey.id], threshold: 1) }, wipeThreshold: 2)
            var trusted = try TUFTrustedSet(root: try TUFWriter.sign(root, with: [rootKey]))
            trusted.timestamp = try TUFTimestamp(
                Self.timestamp(version: trustedVersion, key: timestampKey, expires: FleetDoorbellTests.now + 3600))
            self.trusted = trusted
        }

        static func timestamp(version: Int, key: TUFSigningKey, expires: Date) throws -> [UInt8] {
            try TUFWriter.sign(
                TUFWriter.timestamp(version: version, expires: expires, snapshot: [1, 2, 3], snapshotVersion: version),
                with: [key])
        }

        func ring(_ version: Int, key: TUFSigningKey? = nil, expires: Date = FleetDoorbellTests.now + 3600) throws
            -> [UInt8]
        {
            try Self.timestamp(version: version, key: key ?? timestampKey, expires: expires)
        }
    }

    @Test func aGenuineNewerRingSchedulesOnePollWithinTheDelay() throws {
        let repository = try Repository(trustedVersion: 4)
        var doorbell = FleetDoorbell()
        let decision = doorbell.ring(try repository.ring(5), trusted: repository.trusted, now: Self.now, unit: 0.25)
        #expect(decision == .poll(at: Self.now + 2.5))
        // Later rings, of the same version or newer, join the poll already scheduled.
        #expect(
            doorbell.ring(try repository.ring(5), trusted: repository.trusted, now: Self.now, unit: 0)
                == .notNewer(version: 5))
        #expect(
            doorbell.ring(try repository.ring(6), trusted: repository.trusted, now: Self.now + 1, unit: 0)
                == .alreadyScheduled(at: Self.now + 2.5))
    }

    @Test func ringsAfterAPollWaitForTheSpacing() throws {
        let repository = try Repository(trustedVersion: 1)
        var doorbell = FleetDoorbell()
        var polls: [Date] = []
        // A ring a second for a minute, each newer: polls stay ten seconds apart at least.
        for second in 0..<60 {
            let now = Self.now + Double(second)
            if let due = doorbell.scheduled, due <= now {
                polls.append(due)
                doorbell.polled()
            }
            _ = doorbell.ring(try repository.ring(2 + second), trusted: repository.trusted, now: now, unit: 0)
        }
        #expect(polls.count >= 5 && polls.count <= 6, "\(polls)")
        for (earlier, later) in zip(polls, polls.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= doorbell.minimumSpacing)
        }
    }

    @Test(arguments: ["forged", "expired", "replayed", "oversized", "notJSON"])
    func whatIsNotANewerGenuineTimestampSchedulesNothing(_ kind: String) throws {
        let repository = try Repository(trustedVersion: 7)
        var doorbell = FleetDoorbell()
        let bytes: [UInt8] =
            switch kind {
            case "forged": try repository.ring(8, key: TUFSigningKey())
            case "expired": try repository.ring(8, expires: Self.now - 1)
            case "replayed": try repository.ring(7)
            case "oversized": [UInt8](repeating: 0x20, count: TUFRefresh.Limits.timestamp + 1)
            default: Array("ring".utf8)
            }
        let decision = doorbell.ring(bytes, trusted: repository.trusted, now: Self.now, unit: 0)
        switch (kind, decision) {
        case ("replayed", .notNewer(7)): break
        case ("forged", .refused(let error)): #expect(error.kind == .threshold, "\(error)")
        case ("expired", .refused(let error)): #expect(error.kind == .expired, "\(error)")
        case ("oversized", .refused(let error)): #expect(error.kind == .length, "\(error)")
        case ("notJSON", .refused(let error)): #expect(error.kind == .malformed, "\(error)")
        default: Issue.record("\(kind): \(decision)")
        }
        #expect(doorbell.scheduled == nil)
    }
}
