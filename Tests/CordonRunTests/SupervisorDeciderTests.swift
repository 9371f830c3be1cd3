import CordonProtocol
import Testing

@testable import CordonRun

/// `SupervisorDecider`: what `cordon run` does with the program for each event, fed in the order
/// an agent sends them (docs/ARCHITECTURE.md, "Freezing").
@Suite struct SupervisorDeciderTests {
    static func event(
        _ payload: CordonEvent.Payload, _ state: LifecycleState, reason: EventReason = .userRequest
    ) -> CordonEvent {
        CordonEvent(seq: 1, payload: payload, reason: reason, time: 0, state: state)
    }

    /// The actions for `events`, in order, from a fresh decider.
    static func actions(_ events: [CordonEvent], freezeOnLock: Bool = false) -> [SupervisorDecider.Action] {
        var decider = SupervisorDecider(freezeOnLock: freezeOnLock)
        return events.map { decider.decide($0) }
    }

    @Test func theProgramRunsWhileTheKeyIsAvailable() {
        #expect(Self.actions([Self.event(.state, .unlocked)]) == [.thaw])
        #expect(Self.actions([Self.event(.state, .lockedKeyHeld)]) == [.thaw])
        #expect(Self.actions([Self.event(.state, .lockedNoKey)]) == [.none])
        #expect(Self.actions([Self.event(.didUnlock, .unlocked)]) == [.thaw])
    }

    @Test func aRevocationFreezesThenAcknowledges() {
        let actions = Self.actions([
            Self.event(.state, .unlocked),
            Self.event(.encryptionKeyUnavailable(ackDeadline: nil), .lockedNoKey, reason: .idleTimeout),
            Self.event(.encryptionKeyAvailable(), .unlocked),
        ])
        #expect(actions == [.thaw, .freezeAndAcknowledge, .thaw])
    }

    @Test func aLockFreezesOnlyWithFreezeOnLock() {
        let events = [
            Self.event(.state, .unlocked), Self.event(.didLock, .lockedKeyHeld), Self.event(.state, .lockedKeyHeld),
            Self.event(.didUnlock, .unlocked),
        ]
        #expect(Self.actions(events) == [.thaw, .none, .thaw, .thaw])
        #expect(Self.actions(events, freezeOnLock: true) == [.thaw, .freeze, .none, .thaw])
    }

    @Test func aWipeFreezes() {
        #expect(Self.actions([Self.event(.wiped(), .uninitialized, reason: .wipe)]) == [.freeze])
    }

    @Test func thePostureHoldsThroughAnUnlockUntilTheAgentLiftsIt() {
        var decider = SupervisorDecider(freezeOnLock: false)
        #expect(
            decider.decide(Self.event(.encryptionKeyUnavailable(ackDeadline: nil), .unlocked, reason: .posture))
                == .freezeAndAcknowledge)
        #expect(decider.postureBlocked)
        #expect(decider.decide(Self.event(.didUnlock, .unlocked)) == .none, "the unlock does not thaw it")
        #expect(
            decider.decide(Self.event(.encryptionKeyAvailable(), .unlocked)) == .none, "nor a key for another reason")
        #expect(decider.decide(Self.event(.encryptionKeyAvailable(), .unlocked, reason: .posture)) == .thaw)
        #expect(!decider.postureBlocked)
    }

    @Test func anAgentGoneFreezesReconnectsAndForgetsThePosture() {
        var decider = SupervisorDecider(freezeOnLock: false)
        _ = decider.decide(Self.event(.encryptionKeyUnavailable(ackDeadline: nil), .unlocked, reason: .posture))
        let gone = CordonEvent(
            seq: 2, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .agentUnavailable, time: 0,
            state: .lockedNoKey)
        #expect(decider.decide(gone) == .freezeAndReconnect, "no acknowledgement to an agent that is gone")
        #expect(!decider.postureBlocked, "a new agent says the posture anew")
        #expect(decider.decide(Self.event(.state, .unlocked)) == .thaw)
    }

    @Test func aPostureWarningIsToldAndChangesNothing() {
        let notice = CordonEvent.PostureNotice(
            appId: "com.example.notes",
            results: [
                PostureResult(.secureBoot, .fail, "SecureBoot: 0"), PostureResult(.kernelLockdown, .unknown, "none"),
            ])
        let warning = Self.event(.postureWarning(notice), .unlocked, reason: .posture)
        #expect(
            Self.actions([warning])
                == [.note("cordon: device posture warning: secureBoot (SecureBoot: 0), kernelLockdown (none)")])
    }

    @Test func otherEventsLeaveTheProgramAlone() {
        let others: [CordonEvent.Payload] = [
            .policyDidChange(policyVersion: "sha256:0123abcd"),
            .appEnforced(appId: "com.example.deaf", pid: 42, enforcement: .freeze),
            .openDocument(DocumentInfo(path: "/tmp/x", contentType: nil, sender: "com.example.mail")),
            .didSignOut(provider: "entra"),
        ]
        for payload in others {
            #expect(Self.actions([Self.event(payload, .unlocked)]) == [.none], "\(payload.kind)")
        }
    }
}
