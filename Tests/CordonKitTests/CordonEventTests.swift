import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

@Suite("CordonEvent")
struct CordonEventTests {
    @Test func readsTimesAsDates() {
        let event = CordonEvent(
            seq: 7, payload: .encryptionKeyUnavailable(ackDeadline: 1_700_000_002.5), reason: .logout,
            time: 1_700_000_000.5, state: .lockedNoKey)
        #expect(event.kind == .encryptionKeyUnavailable)
        #expect(event.reason == .logout)
        #expect(event.seq == 7)
        #expect(event.date == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(event.state == .lockedNoKey)
        #expect(event.ackDeadlineDate == Date(timeIntervalSince1970: 1_700_000_002.5))
        #expect(!event.keyAvailable)
    }

    @Test func eventWithoutDeadline() {
        let event = CordonEvent(seq: 2, payload: .didUnlock, reason: .userRequest, time: 10, state: .unlocked)
        #expect(event.ackDeadlineDate == nil)
        #expect(event.keyAvailable)
    }

    @Test(arguments: LifecycleState.allCases)
    func keyAvailabilityFollowsTheState(state: LifecycleState) {
        let event = CordonEvent(seq: 0, payload: .state, reason: .startup, time: 0, state: state)
        #expect(event.keyAvailable == (state == .unlocked || state == .lockedKeyHeld))
    }

    @Test func decodesFromTheWire() throws {
        let json = Data(
            #"{"event":{"seq":3,"kind":"DidLock","reason":"idleTimeout","time":12.25,"state":"lockedKeyHeld"}}"#.utf8)
        let reply = try JSONDecoder().decode(SubscribeReply.self, from: json)
        let event = reply.event
        #expect(event.kind == .didLock)
        #expect(event.reason == .idleTimeout)
        #expect(event.state == .lockedKeyHeld)
        #expect(event.seq == 3)
        #expect(event.date.timeIntervalSince1970 == 12.25)
    }

    @Test func agentUnavailableRevokesTheKey() {
        let event = CordonEvent.agentUnavailable(lastSeq: 41)
        #expect(event.kind == .encryptionKeyUnavailable)
        #expect(event.reason == .agentUnavailable)
        #expect(event.seq == 41)
        #expect(event.state == .lockedNoKey)
        #expect(!event.keyAvailable)
        #expect(event.ackDeadline == nil)
    }
}
