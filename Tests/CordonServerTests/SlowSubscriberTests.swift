import CordonKit
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Testing

@Suite("A subscriber that does not read", .timeLimit(.minutes(3)))
struct SlowSubscriberTests {
    @Test func slowSubscriberIsDroppedAndOthersSeeEveryEvent() async throws {
        var limits = ConnectionLimits.standard
        limits.maxQueuedEvents = 8
        let settings = PolicySettingValues.with {
            $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0
            $0[PolicyKeys.Lock.reauthGraceSeconds] = 3600
        }
        try await withTestAgent(settings: settings, limits: limits) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            // Within the grace a verified managed app unlocks without the passcode.
            let unlocker = try await agent.app("com.example.unlocker")

            let good = EventRecorder(try await client.events())
            let snapshot = try #require(try await good.waitFor(count: 1).first)
            #expect(snapshot.state == .unlocked)

            let slow = try agent.raw()
            let first = try slow.call(#"{"method":"io.cordon.App.Subscribe","more":true,"parameters":{}}"#)
            #expect(first["event"]?["kind"]?.stringValue == "State", "\(first.text)")
            // From here on the slow client reads nothing until it has been dropped.

            // Lock/unlock cycles in the grace until the agent gives up on the slow client; the
            // socket buffers hold a few hundred events, so a bounded loop is plenty.
            let marker = "subscriber too slow"
            var cycles = 0
            while !agent.logs.contains(marker) && cycles < 20_000 {
                try await client.lock()
                try await unlocker.unlockWithinGrace()
                cycles += 1
            }
            try #require(agent.logs.contains(marker), "not dropped after \(cycles) lock/unlock cycles")
            // A few more events after the drop still reach the well-behaved subscriber.
            for _ in 0..<5 {
                try await client.lock()
                try await unlocker.unlockWithinGrace()
            }
            let finalSeq = try await client.status().seq
            let expectedSeq: Int = snapshot.seq + 2 * (cycles + 5)
            #expect(finalSeq == expectedSeq)

            let seen = try await good.waitFor(seq: finalSeq)
            let changes = seen.dropFirst()
            let firstSeq: Int = snapshot.seq + 1
            let everySeq: [Int] = Array(firstSeq...finalSeq)
            #expect(changes.map(\.seq) == everySeq)
            let alternating = (0..<changes.count).map { $0.isMultiple(of: 2) ? EventKind.didLock : EventKind.didUnlock }
            #expect(changes.map(\.kind) == alternating)
            #expect(agent.logs.count(marker) == 1)

            // The slow client finally reads: events in order, then the error, then EOF.
            var seqs: [Int] = []
            var last: RawReply?
            while let message = try slow.readMessage() {
                let reply = try RawReply(message)
                if let previous = last {
                    #expect(previous.error == nil, "\(previous.text)")
                    #expect(previous.continues, "\(previous.text)")
                }
                if let seq = reply["event"]?["seq"]?.intValue { seqs.append(seq) }
                last = reply
            }
            let error = try #require(last)
            #expect(error.error == "io.cordon.App.SubscriberTooSlow", "\(error.text)")
            #expect(error["limit"]?.intValue == 8)
            #expect(!seqs.isEmpty)
            #expect(isStrictlyIncreasing(seqs))
            #expect(seqs.first == firstSeq)
            let lastSlowSeq = seqs.last ?? 0
            #expect(lastSlowSeq < finalSeq)

            // The agent is still fine.
            #expect(try await client.status().state == .unlocked)
            good.cancel()
            await client.close()
        }
    }
}
