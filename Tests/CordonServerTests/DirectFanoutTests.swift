import CordonKit
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Glibc
import Testing

@testable import CordonServer

/// Events written to subscribers' sockets directly (`Subscriber.write`, `DirectSocket`): every
/// subscriber gets every event once and in order, whether its frames went past NIO, through
/// NIO after its socket filled up, or both in turn; a subscriber whose peer is gone is dropped
/// and the others carry on.
@Suite("Events written past NIO", .timeLimit(.minutes(3)))
struct DirectFanoutTests {
    private static let subscribe = #"{"method":"io.cordon.App.Subscribe","more":true,"parameters":{}}"#

    private static let settings = PolicySettingValues.with {
        $0[PolicyKeys.Lock.idleTimeoutSeconds] = 0
        $0[PolicyKeys.Lock.reauthGraceSeconds] = 3600
    }

    /// The event bus's counters and its number of subscribers, read on the agent's loop.
    private static func bus(_ agent: TestAgent) async throws -> (counters: FanoutCounters, subscribers: Int) {
        let server = agent.server
        return try await server.loop.submit {
            let bus = server.agent.value.eventBus
            return (bus.counters, bus.subscriberCount)
        }.get()
    }

    /// Reads a raw subscriber's frames up to and including `seq`; each must continue the stream.
    private static func readEvents(_ socket: RawSocket, through seq: Int) throws -> [Int] {
        var seqs: [Int] = []
        while seqs.last ?? Int.min < seq {
            let reply = try socket.readReply()
            #expect(reply.error == nil && reply.continues, "\(reply.text)")
            seqs.append(try #require(reply["event"]?["seq"]?.intValue, "\(reply.text)"))
        }
        return seqs
    }

    @Test func everyEventArrivesInOrderWhileOneSocketFillsUpAndDrains() async throws {
        var limits = ConnectionLimits.standard
        // The subscriber that does not read falls back to NIO and its backlog, and is never dropped.
        limits.maxQueuedEvents = 100_000
        try await withTestAgent(settings: Self.settings, limits: limits) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            var readers: [EventRecorder] = []
            for _ in 0..<3 { readers.append(EventRecorder(try await client.events())) }
            var snapshotSeqs: [Int] = []
            for reader in readers { snapshotSeqs.append(try #require(try await reader.waitFor(count: 1).first).seq) }
            let full = try agent.raw()
            let snapshot = try full.call(Self.subscribe)
            let snapshotSeq = try #require(snapshot["event"]?["seq"]?.intValue, "\(snapshot.text)")
            #expect(snapshotSeqs == [snapshotSeq, snapshotSeq, snapshotSeq])
            let start = try await Self.bus(agent)
            #expect(start.subscribers == 4)
            #expect(start.counters.direct >= 4, "the snapshots went out directly")

            // Lock/unlock cycles, `full` reading nothing, until its socket had no room and NIO took
            // its frames, then as many again so its frames keep queueing behind them.
            var cycles = 0
            var fellBack = 0
            while fellBack == 0 && cycles < 20_000 {
                try await client.lock()
                try await client.unlock(passcode: "1234")
                cycles += 1
                let counters = try await Self.bus(agent).counters
                fellBack = counters.wouldBlock + counters.partial - start.counters.wouldBlock - start.counters.partial
            }
            try #require(fellBack > 0, "no socket filled up in \(cycles) cycles")
            for _ in 0..<cycles {
                try await client.lock()
                try await client.unlock(passcode: "1234")
            }
            let finalSeq = try await client.status().seq
            #expect(finalSeq == snapshotSeq + 4 * cycles)
            let every = Array((snapshotSeq + 1)...finalSeq)
            for reader in readers {
                let seen = try await reader.waitFor(seq: finalSeq)
                #expect(seen.dropFirst().map(\.seq) == every)
                let kinds = (0..<every.count).map { $0.isMultiple(of: 2) ? EventKind.didLock : EventKind.didUnlock }
                #expect(seen.dropFirst().map(\.kind) == kinds)
            }
            // The full subscriber drains: every frame once, in order, none cut or merged.
            #expect(try Self.readEvents(full, through: finalSeq) == every)
            let drained = try await Self.bus(agent)
            #expect(drained.subscribers == 4)
            #expect(drained.counters.direct > start.counters.direct)
            #expect(drained.counters.throughNIO > start.counters.throughNIO, "frames queued behind NIO's")

            // Drained, every subscriber is written directly again, the full one too.
            try await client.lock()
            try await client.unlock(passcode: "1234")
            for reader in readers { try await reader.waitFor(seq: finalSeq + 2) }
            #expect(try Self.readEvents(full, through: finalSeq + 2) == [finalSeq + 1, finalSeq + 2])
            let after = try await Self.bus(agent).counters
            var expected = drained.counters
            expected.direct += 2 * 4
            #expect(after == expected)
            for reader in readers { reader.cancel() }
            await client.close()
        }
    }

    @Test func aSubscriberWhosePeerIsGoneIsDroppedAndOthersCarryOn() async throws {
        try await withTestAgent(settings: Self.settings) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let readers = [EventRecorder(try await client.events()), EventRecorder(try await client.events())]
            for reader in readers { try await reader.waitFor(count: 1) }
            let gone = try agent.raw()
            _ = try gone.call(Self.subscribe)
            var closed: RawSocket? = try agent.raw()
            _ = try closed?.call(Self.subscribe)
            #expect(try await Self.bus(agent).subscribers == 4)

            // A peer that closed its socket: NIO reads the end and the subscriber goes.
            closed = nil
            try await eventually("the closed subscriber dropped") { try await Self.bus(agent).subscribers == 3 }
            // A peer that stopped receiving: only a write finds out (EPIPE), and NIO closes.
            #expect(shutdown(gone.fd, Int32(SHUT_RD)) == 0)
            let before = try await Self.bus(agent).counters
            try await client.lock()
            try await eventually("the gone subscriber dropped") { try await Self.bus(agent).subscribers == 2 }
            let after = try await Self.bus(agent).counters
            #expect(after.failed == before.failed + 1)
            #expect(after.direct == before.direct + 2)

            try await client.unlock(passcode: "1234")
            try await client.lock()
            let finalSeq = try await client.status().seq
            for reader in readers {
                let seen = try await reader.waitFor(seq: finalSeq)
                let seqs = seen.dropFirst().map(\.seq)
                #expect(seqs == Array((finalSeq - 2)...finalSeq))
                #expect(seen.dropFirst().map(\.kind) == [.didLock, .didUnlock, .didLock])
            }
            for reader in readers { reader.cancel() }
            await client.close()
        }
    }
}
