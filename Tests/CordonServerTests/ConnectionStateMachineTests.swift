import Testing

@testable import CordonServer

/// The connection's decisions without a socket: pipelining, back-pressure, streaming, closing.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine<Int>

    @Test func nothingIsServedBeforeThePeerIsAdmitted() {
        var machine = Machine(maxPendingCalls: 8)
        #expect(machine.received(1) == .process)
        #expect(machine.nextCall(isWritable: true) == nil)
        machine.admitted()
        #expect(machine.nextCall(isWritable: true) == 1)
    }

    @Test func pipelinedCallsWaitWhileOneIsInFlight() {
        var machine = Machine(maxPendingCalls: 8)
        machine.admitted()
        for frame in 1...3 { #expect(machine.received(frame) == .process) }
        #expect(machine.nextCall(isWritable: true) == 1)
        machine.started(.deferred)
        #expect(machine.nextCall(isWritable: true) == nil, "the second call waits for the first reply")
        let replySent = machine.deferredCompleted(oneway: false)
        #expect(replySent)
        let flushes = machine.takeFlush()
        #expect(flushes)
        #expect(machine.nextCall(isWritable: true) == 2)
        machine.started(.reply(send: true))
        #expect(machine.nextCall(isWritable: true) == 3)
        machine.started(.reply(send: false))
        #expect(machine.nextCall(isWritable: true) == nil)
    }

    @Test func aFullSocketHoldsTheBacklog() {
        var machine = Machine(maxPendingCalls: 8)
        machine.admitted()
        _ = machine.received(1)
        #expect(machine.nextCall(isWritable: false) == nil)
        #expect(machine.pendingCalls == 1)
        #expect(machine.nextCall(isWritable: true) == 1)
    }

    @Test func readingPausesAtHalfTheBacklogAndResumesBelowIt() {
        var machine = Machine(maxPendingCalls: 8)
        for frame in 1...3 { _ = machine.received(frame) }
        let reads = machine.readRequested()
        #expect(reads, "3 of 8: keep reading")
        _ = machine.received(4)
        let readsAtHalf = machine.readRequested()
        #expect(!readsAtHalf, "4 of 8: hold the read")
        #expect(machine.readHeld)
        let resumesAtHalf = machine.shouldResumeReading()
        #expect(!resumesAtHalf, "still half full")
        machine.admitted()
        _ = machine.nextCall(isWritable: true)
        let resumes = machine.shouldResumeReading()
        #expect(resumes, "3 of 8 after serving one")
        #expect(!machine.readHeld)
    }

    @Test func tooManyCallsInOneReadFailTheConnection() {
        var machine = Machine(maxPendingCalls: 2)
        #expect(machine.received(1) == .process)
        #expect(machine.received(2) == .process)
        #expect(machine.received(3) == .failTooManyPipelined)
    }

    @Test func aStreamingConnectionServesNoMoreCallsButKeepsReading() {
        var machine = Machine(maxPendingCalls: 2)
        machine.admitted()
        _ = machine.received(1)
        #expect(machine.nextCall(isWritable: true) == 1)
        machine.started(.streaming)
        _ = machine.received(2)
        #expect(machine.nextCall(isWritable: true) == nil)
        _ = machine.received(3)
        let streamingReads = machine.readRequested()
        #expect(streamingReads, "a client's close must still be seen")
    }

    @Test func failingDropsWaitingCallsOnceAndResumesAHeldRead() {
        var machine = Machine(maxPendingCalls: 2)
        machine.admitted()
        _ = machine.received(1)
        let readsWhenFull = machine.readRequested()
        #expect(!readsWhenFull)
        let failure = machine.failing()
        #expect(failure.first && failure.resumeReading)
        #expect(machine.pendingCalls == 0)
        #expect(machine.received(2) == .drop)
        #expect(machine.nextCall(isWritable: true) == nil)
        let failsAgain = machine.failing().first
        #expect(failsAgain == false, "the final error is written once")
    }

    @Test func aReplyArrivingAfterTheConnectionFailedIsNotWritten() {
        var machine = Machine(maxPendingCalls: 2)
        machine.admitted()
        _ = machine.received(1)
        _ = machine.nextCall(isWritable: true)
        machine.started(.deferred)
        _ = machine.failing()
        let replyWritten = machine.deferredCompleted(oneway: false)
        #expect(!replyWritten)
        #expect(!machine.busy)
    }
}
