import CordonKit
import CordonProtocol
import Testing

@Suite("Agent events", .timeLimit(.minutes(2)))
struct AgentEventTests {
    /// Unlock, lock and logout, as every subscriber should see them after its snapshot.
    private static let expectedKinds: [EventKind] = [
        .encryptionKeyAvailable, .didUnlock, .didLock, .encryptionKeyUnavailable,
    ]

    @Test func subscriberSeesSnapshotThenChangesInOrder() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let events = EventRecorder(try await client.events())
            let snapshot = try #require(try await events.waitFor(count: 1).first)
            #expect(snapshot.kind == .state)
            #expect(snapshot.state == .lockedNoKey)
            #expect(snapshot.seq == 0)

            try await client.unlock(passcode: "1234")
            try await client.lock()
            try await client.logout()
            let seen = try await events.waitFor(count: 5)
            let changes = Array(seen.dropFirst())
            #expect(changes.map(\.kind) == Self.expectedKinds)
            #expect(changes.map(\.state) == [.lockedKeyHeld, .unlocked, .lockedKeyHeld, .lockedNoKey])
            #expect(changes.map(\.reason) == [.userRequest, .userRequest, .userRequest, .logout])
            let seqs = changes.map(\.seq)
            #expect(isStrictlyIncreasing(seqs))
            #expect(seqs.first ?? 0 > snapshot.seq)
            #expect(seqs.last == (try await client.status().seq))
            let revocation = try #require(changes.last)
            let deadline = try #require(revocation.ackDeadline)
            #expect(deadline > revocation.time)
            #expect(changes.dropLast().map(\.ackDeadline) == [nil, nil, nil])
            events.cancel()
            await client.close()
        }
    }

    @Test func twoSubscribersSeeTheSameSequence() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let first = EventRecorder(try await client.events())
            let second = EventRecorder(try await client.events())
            let snapshots = [try await first.waitFor(count: 1)[0], try await second.waitFor(count: 1)[0]]
            #expect(snapshots.map(\.kind) == [.state, .state])
            #expect(snapshots.map(\.seq) == [0, 0])
            #expect(snapshots.map(\.state) == [.lockedNoKey, .lockedNoKey])

            try await client.unlock(passcode: "1234")
            try await client.lock()
            // Within the grace a verified managed app unlocks without the passcode.
            let app = try await agent.app("com.example.notes")
            try await app.unlockWithinGrace()
            await app.close()
            try await client.logout()
            let a = Array(try await first.waitFor(count: 7).dropFirst())
            let b = Array(try await second.waitFor(count: 7).dropFirst())
            #expect(a == b)
            #expect(
                a.map(\.kind) == [
                    .encryptionKeyAvailable, .didUnlock, .didLock, .didUnlock, .didLock, .encryptionKeyUnavailable,
                ])
            #expect(a.map(\.seq) == Array(1...6))
            first.cancel()
            second.cancel()
            await client.close()
        }
    }

    @Test func lateSubscriberStartsFromTheCurrentState() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let events = EventRecorder(try await client.events())
            let snapshot = try #require(try await events.waitFor(count: 1).first)
            #expect(snapshot.kind == .state)
            #expect(snapshot.state == .unlocked)
            #expect(snapshot.seq == 2)
            #expect(snapshot.keyAvailable)
            try await client.lock()
            let seen = try await events.waitFor(count: 2)
            #expect(seen[1].kind == .didLock)
            #expect(seen[1].seq == 3)
            events.cancel()
            await client.close()
        }
    }

    @Test func clientEventStreamEndsWhenTheAgentStops() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            let events = EventRecorder(try await client.events())
            try await events.waitFor(count: 1)
            try await agent.stop()
            let seen = try await events.waitUntilFinished()
            #expect(seen.count == 1)
            #expect(events.failure != nil)
            await client.close()
        }
    }
}
