/// What a `lock` key inside `overrides[]` means.
///
/// Two kinds of lock settings exist (docs/ARCHITECTURE.md, "Policy settings"):
/// - **per-app** keys (`ackDeadlineMs`, `onAckTimeout`) apply to the app an override names,
///   through ``EffectivePolicy/forApp(_:)``;
/// - **container-wide** keys (`idleTimeoutSeconds`, `reauthGraceSeconds`, `onScreenLock`,
///   `onSuspend`, `discardKeyOnLock`) govern the one container every app shares. An override
///   that sets one applies to the whole container while the app it names is registered: the
///   value in force is the most restrictive of the base and the overrides of every app
///   registered now, and falls back to the base once they are gone.
public enum LockSettingScope: String, Sendable, CaseIterable {
    /// Applies to the app an override names.
    case perApp
    /// Applies to the container while an app an override names is registered.
    case container

    /// The scope of each `lock` key.
    public static let byKey: [String: LockSettingScope] = [
        "idleTimeoutSeconds": .container, "reauthGraceSeconds": .container, "onScreenLock": .container,
        "onSuspend": .container, "discardKeyOnLock": .container, "ackDeadlineMs": .perApp,
        "onAckTimeout": .perApp,
    ]
}

extension EffectivePolicy {
    /// The container-wide lock settings while `registeredApps` are registered: the base `lock`
    /// section merged with the `lock` overrides of every one of them (most restrictive wins).
    /// Only the container-wide keys of the result are meant to be read (see ``LockSettingScope``);
    /// each one names the rules that produced it.
    public func containerLock(registeredApps: some Sequence<String>) -> EffectiveLockSettings {
        var lock = base.lock
        for app in Set(registeredApps).sorted() {
            guard let override = overrides[app] else { continue }
            lock = lock.merged(with: override.lock)
        }
        return lock
    }
}
