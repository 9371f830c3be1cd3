import Testing

@testable import CordonServer

/// The connection's state as an enum: each transition the handler drives, including the ones
/// the behaviour suites reach only in passing.
@Suite struct ConnectionStateMachineStateTests {
    typealias Machine = ConnectionStateMachine<Int>

    @Test func aConnectionStartsUnadmittedAndAdmissionKeepsAHeldRead() {
        var machine = Machine(maxPendingCalls: 2, maxPendingBytes: 1 << 20)
        #expect(machine.state == .unadmitted(.flowing))
        _ = machine.received(1, bytes: 10, now: 0)
        let reads = machine.readRequested()
        #expect(!reads)
        #expect(machine.state == .unadmitted(.held))
        machine.admitted(now: 0)
        #expect(machine.state == .ready(.held), "the read stays held until the backlog drains")
        #expect(machine.nextCall(isWritable: true) == 1)
        let resumes = machine.shouldResumeReading()
        #expect(resumes)
        #expect(machine.state == .ready(.flowing))
    }

    @Test func aDeferredCallAwaitsItsReplyThenTheConnectionIsReadyAgain() {
        var machine = Machine(maxPendingCalls: 8, maxPendingBytes: 1 << 20)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        _ = machine.nextCall(isWritable: true)
        machine.started(.deferred)
        #expect(machine.state == .awaitingReply(.flowing))
        #expect(machine.busy)
        let written = machine.deferredCompleted(oneway: true, now: 1)
        #expect(!written, "a oneway call's reply is not written")
        let flushes = machine.takeFlush()
        #expect(!flushes)
        #expect(machine.state == .ready(.flowing))
    }

    @Test func aStreamingConnectionResumesAReadHeldBeforeItStreamed() {
        var machine = Machine(maxPendingCalls: 2, maxPendingBytes: 1 << 20)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        let reads = machine.readRequested()
        #expect(!reads)
        _ = machine.nextCall(isWritable: true)
        machine.started(.streaming)
        #expect(machine.state == .streaming(.held))
        let resumes = machine.shouldResumeReading()
        #expect(resumes)
        #expect(machine.state == .streaming(.flowing))
        let readsAgain = machine.readRequested()
        #expect(readsAgain, "a streaming connection always reads")
    }

    @Test func aConnectionFailingBeforeAdmissionStaysClosing() {
        var machine = Machine(maxPendingCalls: 8, maxPendingBytes: 1 << 20)
        _ = machine.received(1, bytes: 10, now: 0)
        let failure = machine.failing()
        #expect(failure.first && !failure.resumeReading)
        #expect(machine.state == .closing)
        machine.admitted(now: 1)
        #expect(machine.state == .closing, "admission does not reopen a failed connection")
        machine.started(.streaming)
        #expect(machine.state == .closing)
        #expect(machine.nextCall(isWritable: true) == nil)
        #expect(!machine.servesAtOnce(isWritable: true))
        let reads = machine.readRequested()
        #expect(reads, "a closing connection reads so the client's close is seen")
    }

    @Test func aCallThatClosesLeavesTheStateToTheFailure() {
        var machine = Machine(maxPendingCalls: 8, maxPendingBytes: 1 << 20)
        machine.admitted(now: 0)
        _ = machine.received(1, bytes: 10, now: 0)
        _ = machine.nextCall(isWritable: true)
        machine.started(.close)
        #expect(machine.state == .ready(.flowing))
        let flushes = machine.takeFlush()
        #expect(!flushes)
        _ = machine.failing()
        #expect(machine.state == .closing)
    }
}
