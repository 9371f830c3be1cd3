extension EffectivePolicy {
    /// Merges the admin and user documents (most restrictive wins), then takes every setting that
    /// none of them sets from `fallback`, the built-in default.
    ///
    /// The default is a fallback, not a participant: an admin file may loosen it (a longer idle
    /// timeout, `onMaxAttempts: lockout`), while a user file can still only tighten what the admin
    /// files and the default say, because it merges with them most-restrictively.
    public static func merge(
        _ documents: [(PolicyDocument, PolicySource)], fallback: (PolicyDocument, PolicySource)
    ) -> EffectivePolicy {
        var merged = merge(documents)
        merged.fillUnset(from: EffectivePolicy(document: fallback.0, source: fallback.1))
        return merged
    }

    /// Replaces every unset setting with `defaults`' (overrides keep tightening on top of the base).
    mutating func fillUnset(from defaults: EffectivePolicy) {
        apps.unknown.fill(from: defaults.apps.unknown)
        passcode.minLength.fill(from: defaults.passcode.minLength)
        passcode.kind.fill(from: defaults.passcode.kind)
        passcode.allowSimple.fill(from: defaults.passcode.allowSimple)
        passcode.maxAttempts.fill(from: defaults.passcode.maxAttempts)
        passcode.onMaxAttempts.fill(from: defaults.passcode.onMaxAttempts)
        base.fillUnset(from: defaults.base)
    }
}

extension EffectivePolicySettings {
    mutating func fillUnset(from defaults: EffectivePolicySettings) {
        lock.idleTimeoutSeconds.fill(from: defaults.lock.idleTimeoutSeconds)
        lock.onScreenLock.fill(from: defaults.lock.onScreenLock)
        lock.onSuspend.fill(from: defaults.lock.onSuspend)
        lock.reauthGraceSeconds.fill(from: defaults.lock.reauthGraceSeconds)
        lock.discardKeyOnLock.fill(from: defaults.lock.discardKeyOnLock)
        lock.ackDeadlineMs.fill(from: defaults.lock.ackDeadlineMs)
        lock.onAckTimeout.fill(from: defaults.lock.onAckTimeout)
        pasteboard.copyOut.fill(from: defaults.pasteboard.copyOut)
        pasteboard.maxChars.fill(from: defaults.pasteboard.maxChars)
        pasteboard.clearOnLock.fill(from: defaults.pasteboard.clearOnLock)
        documents.sendTo.fill(from: defaults.documents.sendTo)
        documents.receiveFrom.fill(from: defaults.documents.receiveFrom)
        documents.allowedTargets.fill(from: defaults.documents.allowedTargets)
        documents.allowedSources.fill(from: defaults.documents.allowedSources)
        documents.saveCopies.fill(from: defaults.documents.saveCopies)
        documents.saveLocations.fill(from: defaults.documents.saveLocations)
        documents.blockedTypes.fill(from: defaults.documents.blockedTypes)
        storage.dataAccess.fill(from: defaults.storage.dataAccess)
        conditions.debuggerAttached.fill(from: defaults.conditions.debuggerAttached)
        conditions.preloadInjected.fill(from: defaults.conditions.preloadInjected)
        conditions.executableMismatch.fill(from: defaults.conditions.executableMismatch)
    }
}

extension ResolvedSetting {
    /// Takes `fallback` when no document set this setting.
    mutating func fill(from fallback: ResolvedSetting) {
        if !isSet { self = fallback }
    }
}
