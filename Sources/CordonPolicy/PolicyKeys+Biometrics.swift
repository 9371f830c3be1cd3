/// Whether the user may unlock with a fingerprint (`passcode.biometrics`).
public enum BiometricsPolicy: String, Sendable, CaseIterable, Restrictiveness, PolicyValue {
    /// Never: only the passcode unlocks (strictest; the default).
    case disabled
    /// The user may opt in (`cordon biometrics on`); the passcode stays the fallback.
    case allowed

    public var strictness: Int { self == .disabled ? 1 : 0 }
}

extension PolicyKeys.Passcode {
    /// Fingerprint unlock through fprintd, which the user opts into; any file's `disabled` wins.
    public static let biometrics = PolicySetting<BiometricsPolicy, BiometricsPolicy>(
        section, "biometrics", scope: .global, .choice([.disabled, .allowed]),
        merge: .stricter(Stricter.level), unset: .disabled, builtin: .disabled,
        summary:
            "Whether the user may opt into unlocking with a fingerprint (fprintd): \"disabled\" (only the passcode; strictest) or \"allowed\". Never for the first unlock after the agent starts, nor 48 hours after the last passcode unlock."
    )
}
