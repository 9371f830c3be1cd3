import CordonProtocol

/// What `cordon run`'s supervisor does with each event of the app (docs/ARCHITECTURE.md,
/// "Freezing"): a value fed the events in order, so the decisions are tested without an agent.
///
/// The program runs only while the key is available (with `freezeOnLock`, only while the container
/// is unlocked too) and no posture revocation is in force: a revocation with reason `posture` holds
/// through the container's unlock until the agent gives the key back with reason `posture`, or a new
/// agent says the posture anew (after `agentUnavailable`).
struct SupervisorDecider: Sendable {
    /// What to do with the program for one event.
    enum Action: Sendable, Equatable {
        /// Leave it as it is.
        case none
        /// Thaw it.
        case thaw
        /// Freeze it.
        case freeze
        /// Freeze it, then acknowledge the revocation as halted.
        case freezeAndAcknowledge
        /// Freeze it and stop reading this registration's events: the agent is gone.
        case freezeAndReconnect
        /// Tell the user.
        case note(String)
    }

    /// Whether the program is also frozen while the container is locked.
    let freezeOnLock: Bool
    /// The device's posture revoked the app's key: the program stays frozen until the agent gives
    /// the key back with reason `posture`.
    private(set) var postureBlocked = false

    init(freezeOnLock: Bool) {
        self.freezeOnLock = freezeOnLock
    }

    /// The action for `event`, the next event of the app.
    mutating func decide(_ event: CordonEvent) -> Action {
        switch event.payload {
        case .state, .encryptionKeyAvailable, .didUnlock:
            if event.kind == .encryptionKeyAvailable && event.reason == .posture { postureBlocked = false }
            let runs = event.keyAvailable && (!freezeOnLock || event.state == .unlocked) && !postureBlocked
            return runs ? .thaw : .none
        case .encryptionKeyUnavailable:
            if event.reason == .posture { postureBlocked = true }
            // A new agent says the posture anew when the supervisor registers again.
            if event.reason == .agentUnavailable {
                postureBlocked = false
                return .freezeAndReconnect
            }
            return .freezeAndAcknowledge
        case .didLock:
            return freezeOnLock ? .freeze : .none
        case .wiped:
            return .freeze
        case .postureWarning(let notice):
            let checks = notice.results.map { "\($0.check.rawValue) (\($0.evidence))" }
            return .note("cordon: device posture warning: \(checks.joined(separator: ", "))")
        case .policyDidChange, .appEnforced, .openDocument, .didSignOut:
            return .none
        }
    }
}
