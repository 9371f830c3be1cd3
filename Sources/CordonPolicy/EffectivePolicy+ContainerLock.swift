extension EffectivePolicy {
    /// The container-wide settings while `registeredApps` are registered: the base merged with the
    /// ``SettingScope/container`` settings of the overrides of every one of them (most restrictive
    /// wins). An override that sets such a key (`lock.idleTimeoutSeconds`) governs the one
    /// container every app shares while its app is registered, and the base returns once it is
    /// gone (docs/ARCHITECTURE.md, "Policy settings"). Each value names the rules that produced it;
    /// settings of another scope keep their base value.
    public func containerSettings(registeredApps: some Sequence<String>) -> EffectivePolicySettings {
        var settings = base
        for app in Set(registeredApps).sorted() {
            guard let override = overrides[app] else { continue }
            settings = settings.merged(with: override.keeping(.container))
        }
        return settings
    }
}
