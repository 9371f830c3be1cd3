import CordonProtocol

extension PolicyKeys.Conditions {
    /// What a stale fleet policy triggers: the fleet directory exists and its `status.json` says no
    /// fresh repository metadata verified in time (or is missing). Device-wide; the strictest wins.
    public static let policyStale = PolicySetting<PolicyStaleAction, PolicyStaleAction>(
        section, "policyStale", scope: .global, .choice([.off, .warn, .block, .lock]),
        merge: .stricter(Stricter.level), unset: .off, builtin: .off,
        summary:
            "What a stale fleet policy triggers (cordon-fleetd verified no fresh metadata in time): \"off\", \"warn\" (shown in status and doctor, audited), \"block\" (every policy decision is denied) or \"lock\" (the container is locked, and locked again at every unlock, while stale)."
    )
}
