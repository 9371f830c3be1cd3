import CordonProtocol

/// Every setting of schema `cordon.policy.v1`, each declared once (docs/ARCHITECTURE.md, "Policy
/// settings"). The parser, the merge, the fallback to the built-in default, `cordon policy show`
/// and `explain`, the JSON Schema (`policies/cordon.policy.v1.schema.json`) and the built-in
/// default (`policies/default.json`) are derived from these declarations.
///
/// Adding a key is one declaration in its section (and the section's `all` list); adding a section
/// is one enum here and one line in ``sections``.
public enum PolicyKeys {
    /// The sections in document order, each with its settings in document order.
    static let sections: [(section: PolicySection, settings: [any AnyPolicySetting])] = [
        (Apps.section, Apps.all), (Passcode.section, Passcode.all), (Lock.section, Lock.all),
        (Pasteboard.section, Pasteboard.all), (Documents.section, Documents.all), (Storage.section, Storage.all),
        (Conditions.section, Conditions.all), (Tokens.section, Tokens.all),
        (Identity.section, Identity.all), (Network.section, Network.all),
    ]

    /// Every setting, in document order.
    static let all: [any AnyPolicySetting] = sections.flatMap(\.settings)

    /// Every setting by its `section.key`.
    static let byName: [String: any AnyPolicySetting] = Dictionary(
        all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The `section.key` of every setting, in document order.
    public static var names: [String] { all.map(\.name) }

    /// The scope of the setting `section.key`; nil for a name no setting has.
    public static func scope(of name: String) -> SettingScope? { byName[name]?.scope }

    /// The sections an override may hold: those with a setting that is not global.
    static var overridableSections: [PolicySection] {
        sections.filter { $0.settings.contains { $0.scope != .global } }.map(\.section)
    }

    /// `apps`: which app ids are managed, bound to executables; what unknown clients get.
    public enum Apps {
        static let section = PolicySection(
            "apps", brief: "Managed apps and what unknown clients get.",
            summary:
                "Which app ids are managed (bound to executables) and what clients that match no managed app get.")
        /// The managed apps and the executables bound to them (admin files only). Bindings merge
        /// per app id: two files binding one id intersect their executables and digests.
        public static let managed = PolicySetting<[ManagedApp], [ManagedApp]>(
            section, "managed", scope: .global, .managedApps, merge: .combine { $0 + $1 }, unset: [], builtin: [],
            userRefusal: "a user policy cannot make apps managed; \"apps.managed\" belongs in an admin policy",
            summary:
                "The managed apps: each receives its own encryption key. Admin policies only; a user policy cannot make apps managed."
        )
        /// What a client that no binding matches gets: `trusted` < `unmanaged` < `refuse`.
        public static let unknown = PolicySetting<UnknownAppAction, UnknownAppAction>(
            section, "unknown", scope: .global, .choice([.trusted, .unmanaged, .refuse]),
            merge: .stricter(Stricter.level), unset: .trusted, builtin: .unmanaged,
            summary:
                "What a client that matches no managed app gets: \"trusted\" (managed: it gets its key; any same-user program can claim any unbound app id), \"unmanaged\" (state events, no key) or \"refuse\" (the registration is refused)."
        )
        static let all: [any AnyPolicySetting] = [unknown, managed]
    }

    /// `passcode`: rules for the passcode and what too many failures trigger (container-wide).
    public enum Passcode {
        static let section = PolicySection(
            "passcode", brief: "Passcode rules and the action after too many failed attempts.",
            summary: "Rules for the container passcode and what too many failed attempts trigger.",
            perAppRefusal: "passcode rules apply to the whole container")
        /// The fewest characters; the largest wins.
        public static let minLength = PolicySetting<Int, Int>(
            section, "minLength", scope: .global, .integer(4...64), merge: .stricter(Stricter.larger), unset: 0,
            builtin: 4,
            summary: "The fewest characters a passcode may have (4 to 64); the highest value of all files wins.")
        /// Which characters; `alphanumeric` is stricter.
        public static let kind = PolicySetting<PasscodeKind, PasscodeKind>(
            section, "kind", scope: .global, .choice([.numeric, .alphanumeric]), merge: .stricter(Stricter.level),
            unset: .numeric, builtin: .numeric,
            summary:
                "Which characters a passcode must use: \"numeric\" (digits) or \"alphanumeric\" (letters and digits; stricter)."
        )
        /// Whether simple sequences are allowed; `false` is stricter.
        public static let allowSimple = PolicySetting<Bool, Bool>(
            section, "allowSimple", scope: .global, .boolean, merge: .stricter(Stricter.whenFalse), unset: true,
            builtin: true, summary: "Whether simple sequences (1234, 1111, abcd) are allowed; false is stricter.")
        /// Failed attempts before `onMaxAttempts`; the smallest wins.
        public static let maxAttempts = PolicySetting<Int, Int?>(
            section, "maxAttempts", scope: .global, .integer(1...100), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: 10,
            summary: "Failed passcode attempts (1 to 100) before onMaxAttempts is applied; the lowest value wins.")
        /// What the last allowed failure triggers; `wipe` is stricter.
        public static let onMaxAttempts = PolicySetting<MaxAttemptsAction, MaxAttemptsAction>(
            section, "onMaxAttempts", scope: .global, .choice([.lockout, .wipe]), merge: .stricter(Stricter.level),
            unset: .lockout, builtin: .wipe,
            summary:
                "What the last allowed failure triggers: \"lockout\" (no more attempts) or \"wipe\" (crypto-erase the container; stricter)."
        )
        /// Whether a TPM seals the key's wrapping; `required` is the strictest.
        public static let hardware = PolicySetting<PasscodeHardware, PasscodeHardware>(
            section, "hardware", scope: .global, .choice([.off, .preferred, .required]),
            merge: .stricter(Stricter.level), unset: .off, builtin: .preferred,
            summary:
                "Whether a TPM 2.0 seals the master key's wrapping, so that guessing needs the TPM, which limits guesses: \"off\", \"preferred\" (the TPM when present; otherwise the passcode alone, with a warning) or \"required\" (no TPM, no initialisation; strictest)."
        )
        /// The PCRs the TPM seal is bound to; the selections of all files unite.
        public static let pcrs = PolicySetting<PCRSelection, PCRSelection>(
            section, "pcrs", scope: .global, .pcrs, merge: .combine(PCRSelection.union), unset: PCRSelection([]),
            builtin: PCRSelection([]),
            summary:
                "PCRs of the SHA-256 bank (0 to 23) the TPM seal is bound to, e.g. [7] for the Secure Boot state: when one changes, the passcode no longer unseals the key and the recovery key is needed. The lists of all files unite."
        )
        static let all: [any AnyPolicySetting] = [
            minLength, kind, allowSimple, maxAttempts, onMaxAttempts, hardware, pcrs,
            biometrics,
        ]
    }

    /// `lock`: when the container locks and what a late acknowledgement costs an app.
    public enum Lock {
        static let section = PolicySection(
            "lock", brief: "When the container locks and what a late acknowledgement costs an app.",
            summary: "When the container locks, and what an app that acknowledges the lock too late gets.")
        /// Seconds without activity before the lock; the smallest positive wins, 0 (never) is the loosest.
        public static let idleTimeoutSeconds = PolicySetting<Int, Int>(
            section, "idleTimeoutSeconds", scope: .container, .integer(0...86_400),
            merge: .stricter(Stricter.shorterTimeout), unset: 0, builtin: 300,
            summary: "Seconds without activity before the container locks (0 to 86400); 0 disables the idle lock.")
        /// Lock when the screen locks; `true` is stricter.
        public static let onScreenLock = PolicySetting<Bool, Bool>(
            section, "onScreenLock", scope: .container, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: true, summary: "Lock the container when the screen locks.")
        /// Lock when the machine suspends; `true` is stricter.
        public static let onSuspend = PolicySetting<Bool, Bool>(
            section, "onSuspend", scope: .container, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: true, summary: "Lock the container when the machine suspends.")
        /// Lock when the session reports idle (logind's IdleHint) while the idle timeout is on; `true` is stricter.
        public static let onSessionIdle = PolicySetting<Bool, Bool>(
            section, "onSessionIdle", scope: .container, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: true,
            summary:
                "Lock the container when the desktop session reports idle (logind's IdleHint) while the idle timeout is on; false leaves idle locking to idleTimeoutSeconds alone."
        )
        /// Seconds after a lock in which unlocking needs no passcode; the smallest wins.
        public static let reauthGraceSeconds = PolicySetting<Int, Int?>(
            section, "reauthGraceSeconds", scope: .container, .integer(0...86_400), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: 60,
            summary:
                "Seconds after a lock during which unlocking again needs no passcode (0 to 86400); 0 always asks.")
        /// Discard the key on every lock; `true` is stricter.
        public static let discardKeyOnLock = PolicySetting<Bool, Bool>(
            section, "discardKeyOnLock", scope: .container, .boolean, merge: .stricter(Stricter.whenTrue),
            unset: false, builtin: false,
            summary:
                "Discard the key on every lock (the next unlock needs the passcode) instead of keeping it in memory.")
        /// Milliseconds an app has to acknowledge a revocation; the smallest wins.
        public static let ackDeadlineMs = PolicySetting<Int, Int?>(
            section, "ackDeadlineMs", scope: .perApp, .integer(100...600_000), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: 2000,
            summary:
                "Milliseconds an app has to acknowledge that it halted I/O after the key is withdrawn (100 to 600000).")
        /// What an app that misses the deadline gets; the strictest wins.
        public static let onAckTimeout = PolicySetting<AckTimeoutAction, AckTimeoutAction>(
            section, "onAckTimeout", scope: .perApp, .choice([.freeze, .terminate, .disconnect, .report]),
            merge: .stricter(Stricter.level), unset: .report, builtin: .report,
            summary:
                "What an app that misses the deadline gets: \"freeze\" (SIGSTOP until the key returns), \"terminate\", \"disconnect\" or \"report\" (audit only)."
        )
        static let all: [any AnyPolicySetting] = [
            idleTimeoutSeconds, onScreenLock, onSuspend, onSessionIdle, reauthGraceSeconds, discardKeyOnLock,
            ackDeadlineMs, onAckTimeout,
        ]
    }
}
