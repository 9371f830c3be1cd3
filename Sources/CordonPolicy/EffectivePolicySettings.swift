/// The settings an override can tighten per app: `lock`, `pasteboard`, `documents`, `storage`,
/// `conditions`. Each is resolved with its provenance; an unset one holds its loosest value.
public struct EffectivePolicySettings: Sendable, Hashable {
    /// The effective `lock` section.
    public internal(set) var lock = EffectiveLockSettings()
    /// The effective `pasteboard` section.
    public internal(set) var pasteboard = EffectivePasteboardSettings()
    /// The effective `documents` section.
    public internal(set) var documents = EffectiveDocumentsSettings()
    /// The effective `storage` section.
    public internal(set) var storage = EffectiveStorageSettings()
    /// The effective `conditions` section.
    public internal(set) var conditions = EffectiveConditionsSettings()

    /// Nothing set: every setting at its loosest value (the identity of merging).
    public static let unset = EffectivePolicySettings()
}

/// The effective `lock` section. Defaults (when no document sets a key) are the loosest values.
public struct EffectiveLockSettings: Sendable, Hashable {
    /// The smallest positive value wins; 0 (the default) never locks and is the loosest.
    public internal(set) var idleTimeoutSeconds = ResolvedSetting<Int>(unset: 0)
    /// `true` is stricter; default `false`.
    public internal(set) var onScreenLock = ResolvedSetting<Bool>(unset: false)
    /// `true` is stricter; default `false`.
    public internal(set) var onSuspend = ResolvedSetting<Bool>(unset: false)
    /// The smallest wins; nil (the default) is no limit.
    public internal(set) var reauthGraceSeconds = ResolvedSetting<Int?>(unset: nil)
    /// `true` is stricter; default `false`.
    public internal(set) var discardKeyOnLock = ResolvedSetting<Bool>(unset: false)
    /// The smallest wins; nil (the default) is no deadline.
    public internal(set) var ackDeadlineMs = ResolvedSetting<Int?>(unset: nil)
    /// The strictest wins; default `report`.
    public internal(set) var onAckTimeout = ResolvedSetting<AckTimeoutAction>(unset: .report)
}

/// The effective `pasteboard` section.
public struct EffectivePasteboardSettings: Sendable, Hashable {
    /// The strictest level wins; default `any`.
    public internal(set) var copyOut = ResolvedSetting<PasteboardLevel>(unset: .any)
    /// The smallest wins; nil (the default) is no truncation.
    public internal(set) var maxChars = ResolvedSetting<Int?>(unset: nil)
    /// `true` is stricter; default `false`.
    public internal(set) var clearOnLock = ResolvedSetting<Bool>(unset: false)
}

/// The effective `documents` section.
public struct EffectiveDocumentsSettings: Sendable, Hashable {
    /// The strictest scope wins; default `any`.
    public internal(set) var sendTo = ResolvedSetting<ShareScope>(unset: .any)
    /// The strictest scope wins; default `any`.
    public internal(set) var receiveFrom = ResolvedSetting<ShareScope>(unset: .any)
    /// An allow-list of target app ids: lists intersect; nil (the default) restricts nothing.
    public internal(set) var allowedTargets = ResolvedSetting<Set<String>?>(unset: nil)
    /// An allow-list of source app ids: lists intersect; nil (the default) restricts nothing.
    public internal(set) var allowedSources = ResolvedSetting<Set<String>?>(unset: nil)
    /// `block` is stricter; default `allow`.
    public internal(set) var saveCopies = ResolvedSetting<SaveCopies>(unset: .allow)
    /// An allow-list of globs, one clause per document; nil (the default) restricts nothing.
    public internal(set) var saveLocations = ResolvedSetting<SaveLocationClauses?>(unset: nil)
    /// A block-list of lower-cased MIME types and extensions: lists unite; default empty.
    public internal(set) var blockedTypes = ResolvedSetting<Set<String>>(unset: [])
}

/// The effective `storage` section.
public struct EffectiveStorageSettings: Sendable, Hashable {
    /// `whenUnlocked` is stricter; default `afterFirstUnlock`.
    public internal(set) var dataAccess = ResolvedSetting<DataAccess>(unset: .afterFirstUnlock)
}

/// The effective `conditions` section: wipe > block > warn; every default is `warn`.
public struct EffectiveConditionsSettings: Sendable, Hashable {
    /// What an attached debugger triggers.
    public internal(set) var debuggerAttached = ResolvedSetting<ConditionAction>(unset: .warn)
    /// What an injected preload library triggers.
    public internal(set) var preloadInjected = ResolvedSetting<ConditionAction>(unset: .warn)
    /// What a client whose executable does not match its app's binding triggers.
    public internal(set) var executableMismatch = ResolvedSetting<ConditionAction>(unset: .warn)
}

/// The effective `apps` section (global: overrides cannot change it).
public struct EffectiveAppsSettings: Sendable, Hashable {
    /// The managed app bindings by app id; two documents binding one id intersect their lists.
    /// Bindings from user documents are ignored: users cannot make an app managed.
    public internal(set) var managed: [String: ResolvedSetting<ManagedAppRequirement>] = [:]
    /// `refuse` is stricter; default `unmanaged`.
    public internal(set) var unknown = ResolvedSetting<UnknownAppAction>(unset: .unmanaged)
}

/// The effective `passcode` section (global: overrides cannot change it).
public struct EffectivePasscodeSettings: Sendable, Hashable {
    /// The largest wins; default 0 (no minimum).
    public internal(set) var minLength = ResolvedSetting<Int>(unset: 0)
    /// `alphanumeric` is stricter; default `numeric`.
    public internal(set) var kind = ResolvedSetting<PasscodeKind>(unset: .numeric)
    /// `false` is stricter; default `true`.
    public internal(set) var allowSimple = ResolvedSetting<Bool>(unset: true)
    /// The smallest wins; nil (the default) is no limit.
    public internal(set) var maxAttempts = ResolvedSetting<Int?>(unset: nil)
    /// `wipe` is stricter; default `lockout`.
    public internal(set) var onMaxAttempts = ResolvedSetting<MaxAttemptsAction>(unset: .lockout)
}
