extension EffectivePolicy {
    /// The policy in force: the admin documents merged (most restrictive wins), every setting none
    /// of them sets taken from `fallback` (the built-in default), and then the user documents
    /// merged on top, most restrictively.
    ///
    /// The default is a fallback for the admin, not a participant: an admin file may loosen it (a
    /// longer idle timeout, `onMaxAttempts: lockout`). A user file can only tighten: it merges
    /// against the admin files and the default alike, so a key no admin file sets still holds the
    /// default's value against it (docs/THREAT-MODEL.md).
    public static func merge(
        _ documents: [(PolicyDocument, PolicySource)], fallback: (PolicyDocument, PolicySource)
    ) -> EffectivePolicy {
        var merged = merge(documents.filter { $0.1.origin != .user })
        merged.fillUnset(from: EffectivePolicy(document: fallback.0, source: fallback.1))
        return documents.filter { $0.1.origin == .user }.reduce(merged) { policy, entry in
            policy.merged(with: EffectivePolicy(document: entry.0, source: entry.1))
        }
    }

    /// Replaces every unset setting with `defaults`' (overrides keep tightening on top of the base).
    mutating func fillUnset(from defaults: EffectivePolicy) {
        base.fillUnset(from: defaults.base)
        managedApps.merge(defaults.managedApps) { own, _ in own }
    }
}

extension ResolvedSetting {
    /// Takes `fallback` when no document set this setting.
    mutating func fill(from fallback: ResolvedSetting) {
        if !isSet { self = fallback }
    }
}
