import CordonProtocol
import Testing

@testable import CordonRun

/// `SupervisorDecider`: what `cordon run` does with the program for each event, fed in the order
/// an agent sends them (docs/ARCHITECTURE.md, "Freezing").
@Suite struct SupervisorDeciderTests {
    static func event(
        _ kind: EventKind, _ state: LifecycleState, reason: EventReason = .userRequest,
        posture: [PostureResult]? = nil
    ) -> CordonEvent {
        CordonEvent(seq: 1, kind: kind, reason: reason, time: 0, state: state, posture: posture)
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
            Self.event(.state, .unlocked), Self.event(.encryptionKeyUnavailable, .lockedNoKey, reason: .idleTimeout),
            Self.event(.encryptionKeyAvailable, .unlocked),
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
        #expect(Self.actions([Self.event(.wiped, .uninitialized, reason: .wipe)]) == [.freeze])
    }

    @Test func thePostureHoldsThroughAnUnlockUntilTheAgentLiftsIt() {
        var decider = SupervisorDecider(freezeOnLock: false)
        #expect(
            decider.decide(Self.event(.encryptionKeyUnavailable, .unlocked, reason: .posture)) == .freezeAndAcknowledge)
        #expect(decider.postureBlocked)
        #expect(decider.decide(Self.event(.didUnlock, .unlocked)) == .none, "the unlock does not thaw it")
        #expect(decider.decide(Self.event(.encryptionKeyAvailable, .unlocked)) == .none, "nor a key for another reason")
        #expect(decider.decide(Self.event(.encryptionKeyAvailable, .unlocked, reason: .posture)) == .thaw)
        #expect(!decider.postureBlocked)
    }

    @Test func anAgentGoneFreezesReconnectsAndForgetsThePosture() {
        var decider = SupervisorDecider(freezeOnLock: false)
        _ = decider.decide(Self.event(.encryptionKeyUnavailable, .unlocked, reason: .posture))
        let gone = CordonEvent(
            seq: 2, kind: .encryptionKeyUnavailable, reason: .agentUnavailable, time: 0, state: .lockedNoKey)
        #expect(decider.decide(gone) == .freezeAndReconnect, "no acknowledgement to an agent that is gone")
        #expect(!decider.postureBlocked, "a new agent says the posture anew")
        #expect(decider.decide(Self.event(.state, .unlocked)) == .thaw)
    }

    @Test func aPostureWarningIsToldAndChangesNothing() {
        let warning = Self.event(
            .postureWarning, .unlocked, reason: .posture,
            posture: [
                PostureResult(.secureBoot, .fail, "SecureBoot: 0"), PostureResult(.kernelLockdown, .unknown, "none"),
            ])
        #expect(
            Self.actions([warning])
                == [.note("cordon: device posture warning: secureBoot (SecureBoot: 0), kernelLockdown (none)")])
    }

    @Test func otherEventsLeaveTheProgramAlone() {
        for kind in [EventKind.policyDidChange, .appEnforced, .openDocument, .didSignOut] {
            #expect(Self.actions([Self.event(kind, .unlocked)]) == [.none], "\(kind)")
        }
    }
}
