import Testing

@testable import CordonServer

/// The connection's decisions without a socket: pipelining, back-pressure in calls and in
/// bytes, streaming, closing, idleness.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine<Int>

    /// A machine whose backlog pauses at half of `calls` calls or at `bytes` bytes.
    static func machine(calls: Int = 8, bytes: Int = 1 << 20) -> Machine {
        Machine(maxPendingCalls: calls, maxPendingBytes: bytes)
    }

    @Test func nothingIsServedBeforeThePeerIsAdmitted() {
        var machine = Self.machine()
        #expect(machine.received(1, bytes: 10, now: 0) == .process)
        #expect(machine.nextCall(isWritable: true) == nil)
        machine.admitted(now: 0)
        #expect(machine.nextCall(isWritable: true) == 1)
    }

    @Test func pipelinedCallsWaitWhileOneIsInFlight() {
        var machine = Self.machine()
        machine.admitted(now: 0)
        for frame in 1...3 { #expect(machine.received(frame, bytes: 10, now: 0) == .process) }
        #expect(machine.nextCall(isWritable: true) == 1)
        machine.started(Machine.CallKind.deferred)
        #expect(machine.nextCall(isWritable: true) == nil, "the second call waits for the first reply")
        let replySent = machine.deferredCompleted(oneway: false, now: 1)
        #expect(replySent)
        let flushes = machine.takeFlush()
        #expect(flushes)
        #expect(machine.nextCall(isWritable: true) == 2)
        machine.started(Machine.CallKind.reply(flush: true))
        #expect(machine.nextCall(isWritable: true) == 3)
        machine.started(Machine.CallKind.reply(flush: false))
        #expect(machine.nextCall(isWritable: true) == nil)
        #expect(machine.pendingBytes == 0)
    }

    @Test func aFullSocketHoldsTheBacklog() {
        var machine = Self.machine()
        machine.admitted(now: 0)
        #expect(machine.servesAtOnce(isWritable: true))
        #expect(!machine.servesAtOnce(isWritable: false))
        _ = machine.received(1, bytes: 10, now: 0)
        #expect(machine.nextCall(isWritable: false) == nil)
        #expect(machine.pendingCalls == 1)
        #expect(!machine.servesAtOnce(isWritable: true), "behind a waiting call")
        #expect(machine.nextCall(isWritable: true) == 1)
    }

    @Test func readingPausesAtHalfTheBacklogAndResumesBelowIt() {
        var machine = Self.machine()
        for frame in 1...3 { _ = machine.received(frame, bytes: 10, now: 0) }
        let reads = machine.readRequested()
        #expect(reads, "3 of 8: keep reading")
        _ = machine.received(4, bytes: 10, now: 0)
        let readsAtHalf = machine.readRequested()
        #expect(!readsAtHalf, "4 of 8: hold the read")
        #expect(machine.readHeld)
        let resumesAtHalf = machine.shouldResumeReading()
        #expect(!resumesAtHalf, "still half full")
        machine.admitted(now: 0)
        _ = machine.nextCall(isWritable: true)
        let resumes = machine.shouldResumeReading()
        #expect(resumes, "3 of 8 after serving one")
        #expect(!machine.readHeld)
    }

    @Test func readingPausesAtTheByteBudgetWhateverTheCallCount() {
        // Two 64 KiB calls waiting behind one in flight: far from half of 64 calls, but at the budget.
        var machine = Self.machine(calls: 64, bytes: 128 * 1024)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 100, now: 0)
        _ = machine.nextCall(isWritable: true)
        machine.started(Machine.CallKind.deferred)
        _ = machine.received(2, bytes: 64 * 1024, now: 0)
        let readsBelow = machine.readRequested()
        #expect(readsBelow, "64 KiB of 128 KiB")
        _ = machine.received(3, bytes: 64 * 1024, now: 0)
        #expect(machine.pendingBytes == 128 * 1024)
        let readsAtBudget = machine.readRequested()
        #expect(!readsAtBudget, "the byte budget is reached: no more reading")
        _ = machine.deferredCompleted(oneway: false, now: 1)
        #expect(machine.nextCall(isWritable: true) == 2)
        machine.started(Machine.CallKind.reply(flush: true))
        let resumes = machine.shouldResumeReading()
        #expect(resumes, "64 KiB left")
        #expect(machine.pendingBytes == 64 * 1024)
    }

    @Test func tooManyCallsInOneReadFailTheConnection() {
        var machine = Self.machine(calls: 2)
        #expect(machine.received(1, bytes: 1, now: 0) == .process)
        #expect(machine.received(2, bytes: 1, now: 0) == .process)
        #expect(machine.received(3, bytes: 1, now: 0) == .failTooManyPipelined)
    }

    @Test func aStreamingConnectionKeepsNothingItIsSentButKeepsReading() {
        var machine = Self.machine(calls: 2, bytes: 100)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        #expect(machine.nextCall(isWritable: true) == 1)
        machine.started(Machine.CallKind.streaming)
        for frame in 2...100 { #expect(machine.received(frame, bytes: 65536, now: 0) == .drop) }
        #expect(
            machine.pendingCalls == 0 && machine.pendingBytes == 0, "nothing is buffered for a streaming connection")
        #expect(machine.nextCall(isWritable: true) == nil)
        let streamingReads = machine.readRequested()
        #expect(streamingReads, "a client's close must still be seen")
    }

    @Test func failingDropsWaitingCallsOnceAndResumesAHeldRead() {
        var machine = Self.machine(calls: 2)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        let readsWhenFull = machine.readRequested()
        #expect(!readsWhenFull)
        let failure = machine.failing()
        #expect(failure.first && failure.resumeReading)
        #expect(machine.pendingCalls == 0 && machine.pendingBytes == 0)
        #expect(machine.received(2, bytes: 10, now: 0) == .drop)
        #expect(machine.nextCall(isWritable: true) == nil)
        let failsAgain = machine.failing().first
        #expect(failsAgain == false, "the final error is written once")
    }

    @Test func aReplyArrivingAfterTheConnectionFailedIsNotWritten() {
        var machine = Self.machine(calls: 2)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        _ = machine.nextCall(isWritable: true)
        machine.started(Machine.CallKind.deferred)
        _ = machine.failing()
        let replyWritten = machine.deferredCompleted(oneway: false, now: 1)
        #expect(!replyWritten)
        #expect(!machine.busy)
    }

    @Test func anIdleUnregisteredConnectionIsClosedAfterTheTimeout() {
        var machine = Self.machine()
        machine.admitted(now: 1000)
        #expect(machine.idleCheck(now: 1000, timeout: 100, registered: false) == .checkAfter(100))
        #expect(machine.idleCheck(now: 1060, timeout: 100, registered: false) == .checkAfter(40))
        // A call resets the clock.
        _ = machine.received(1, bytes: 10, now: 1080)
        _ = machine.nextCall(isWritable: true)
        machine.started(Machine.CallKind.reply(flush: true))
        #expect(machine.idleCheck(now: 1100, timeout: 100, registered: false) == .checkAfter(80))
        #expect(machine.idleCheck(now: 1180, timeout: 100, registered: false) == .close)
    }

    @Test func aBusyConnectionIsNotIdleAndItsReplyResetsTheClock() {
        var machine = Self.machine()
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        _ = machine.nextCall(isWritable: true)
        machine.started(Machine.CallKind.deferred)
        #expect(machine.idleCheck(now: 500, timeout: 100, registered: false) == .checkAfter(100), "a call in flight")
        _ = machine.deferredCompleted(oneway: false, now: 550)
        #expect(machine.idleCheck(now: 600, timeout: 100, registered: false) == .checkAfter(50))
        // Calls waiting on a full socket are not idleness either.
        _ = machine.received(2, bytes: 10, now: 600)
        #expect(machine.idleCheck(now: 900, timeout: 100, registered: false) == .checkAfter(100))
    }

    @Test func registeredStreamingAndClosingConnectionsAreNeverIdle() {
        var registered = Self.machine()
        registered.admitted(now: 0)
        #expect(registered.idleCheck(now: 10_000, timeout: 100, registered: true) == .stop)

        var streaming = Self.machine()
        streaming.admitted(now: 0)
        _ = streaming.received(1, bytes: 10, now: 0)
        _ = streaming.nextCall(isWritable: true)
        streaming.started(Machine.CallKind.streaming)
        #expect(streaming.idleCheck(now: 10_000, timeout: 100, registered: false) == .stop)

        var closing = Self.machine()
        closing.admitted(now: 0)
        _ = closing.failing()
        #expect(closing.idleCheck(now: 10_000, timeout: 100, registered: false) == .stop)
    }
}
