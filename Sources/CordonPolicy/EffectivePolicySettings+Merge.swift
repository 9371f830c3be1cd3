/// The "most restrictive wins" orders: each is a strict total order (`isStricter(a, b)`), so the
/// join of settings is commutative, associative and idempotent.
enum Stricter {
    /// The higher `strictness` wins.
    static func level<Value: Restrictiveness>(_ lhs: Value, _ rhs: Value) -> Bool {
        lhs.strictness > rhs.strictness
    }

    /// `true` is stricter.
    static func whenTrue(_ lhs: Bool, _ rhs: Bool) -> Bool { lhs && !rhs }

    /// `false` is stricter.
    static func whenFalse(_ lhs: Bool, _ rhs: Bool) -> Bool { !lhs && rhs }

    /// The larger number wins.
    static func larger(_ lhs: Int, _ rhs: Int) -> Bool { lhs > rhs }

    /// The smaller bound wins; nil is no bound, the loosest.
    static func smallerBound(_ lhs: Int?, _ rhs: Int?) -> Bool {
        switch (lhs, rhs) {
        case (.some(let lhs), .some(let rhs)): return lhs < rhs
        case (.some, .none): return true
        case (.none, _): return false
        }
    }

    /// The smallest positive timeout wins; 0 (never) and below are the loosest.
    static func shorterTimeout(_ lhs: Int, _ rhs: Int) -> Bool {
        let lhsKey = lhs > 0 ? (0, lhs) : (1, lhs)
        let rhsKey = rhs > 0 ? (0, rhs) : (1, rhs)
        return lhsKey < rhsKey
    }

    /// Allow-lists intersect; nil restricts nothing.
    static func intersect(_ lhs: Set<String>?, _ rhs: Set<String>?) -> Set<String>? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return lhs.intersection(rhs)
    }

    /// Glob allow-lists: both must be satisfied; nil restricts nothing.
    static func intersect(_ lhs: SaveLocationClauses?, _ rhs: SaveLocationClauses?) -> SaveLocationClauses? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return lhs.intersecting(rhs)
    }
}

extension EffectivePolicySettings {
    /// The most restrictive of both, with the provenance of every winning value.
    public func merged(with other: EffectivePolicySettings) -> EffectivePolicySettings {
        var result = self
        result.lock = lock.merged(with: other.lock)
        result.pasteboard = pasteboard.merged(with: other.pasteboard)
        result.documents = documents.merged(with: other.documents)
        result.storage.dataAccess = storage.dataAccess.keepingStricter(
            other.storage.dataAccess, isStricter: Stricter.level)
        result.conditions = conditions.merged(with: other.conditions)
        return result
    }
}

extension EffectiveLockSettings {
    func merged(with other: Self) -> Self {
        var result = self
        result.idleTimeoutSeconds = idleTimeoutSeconds.keepingStricter(
            other.idleTimeoutSeconds, isStricter: Stricter.shorterTimeout)
        result.onScreenLock = onScreenLock.keepingStricter(other.onScreenLock, isStricter: Stricter.whenTrue)
        result.onSuspend = onSuspend.keepingStricter(other.onSuspend, isStricter: Stricter.whenTrue)
        result.reauthGraceSeconds = reauthGraceSeconds.keepingStricter(
            other.reauthGraceSeconds, isStricter: Stricter.smallerBound)
        result.discardKeyOnLock = discardKeyOnLock.keepingStricter(
            other.discardKeyOnLock, isStricter: Stricter.whenTrue)
        result.ackDeadlineMs = ackDeadlineMs.keepingStricter(other.ackDeadlineMs, isStricter: Stricter.smallerBound)
        result.onAckTimeout = onAckTimeout.keepingStricter(other.onAckTimeout, isStricter: Stricter.level)
        return result
    }
}

extension EffectivePasteboardSettings {
    func merged(with other: Self) -> Self {
        var result = self
        result.copyOut = copyOut.keepingStricter(other.copyOut, isStricter: Stricter.level)
        result.maxChars = maxChars.keepingStricter(other.maxChars, isStricter: Stricter.smallerBound)
        result.clearOnLock = clearOnLock.keepingStricter(other.clearOnLock, isStricter: Stricter.whenTrue)
        return result
    }
}

extension EffectiveDocumentsSettings {
    func merged(with other: Self) -> Self {
        var result = self
        result.sendTo = sendTo.keepingStricter(other.sendTo, isStricter: Stricter.level)
        result.receiveFrom = receiveFrom.keepingStricter(other.receiveFrom, isStricter: Stricter.level)
        result.allowedTargets = allowedTargets.combining(other.allowedTargets, with: Stricter.intersect)
        result.allowedSources = allowedSources.combining(other.allowedSources, with: Stricter.intersect)
        result.saveCopies = saveCopies.keepingStricter(other.saveCopies, isStricter: Stricter.level)
        result.saveLocations = saveLocations.combining(other.saveLocations, with: Stricter.intersect)
        result.blockedTypes = blockedTypes.combining(other.blockedTypes) { $0.union($1) }
        return result
    }
}

extension EffectiveConditionsSettings {
    func merged(with other: Self) -> Self {
        var result = self
        result.debuggerAttached = debuggerAttached.keepingStricter(other.debuggerAttached, isStricter: Stricter.level)
        result.preloadInjected = preloadInjected.keepingStricter(other.preloadInjected, isStricter: Stricter.level)
        result.executableMismatch = executableMismatch.keepingStricter(
            other.executableMismatch, isStricter: Stricter.level)
        return result
    }
}

extension EffectiveAppsSettings {
    /// Bindings unite by id; two bindings of one id intersect; `unknown` keeps the stricter.
    func merged(with other: Self) -> Self {
        var result = self
        result.managed.merge(other.managed) { lhs, rhs in
            lhs.combining(rhs) { $0.intersecting($1) }
        }
        result.unknown = unknown.keepingStricter(other.unknown, isStricter: Stricter.level)
        return result
    }
}

extension EffectivePasscodeSettings {
    func merged(with other: Self) -> Self {
        var result = self
        result.minLength = minLength.keepingStricter(other.minLength, isStricter: Stricter.larger)
        result.kind = kind.keepingStricter(other.kind, isStricter: Stricter.level)
        result.allowSimple = allowSimple.keepingStricter(other.allowSimple, isStricter: Stricter.whenFalse)
        result.maxAttempts = maxAttempts.keepingStricter(other.maxAttempts, isStricter: Stricter.smallerBound)
        result.onMaxAttempts = onMaxAttempts.keepingStricter(other.onMaxAttempts, isStricter: Stricter.level)
        return result
    }
}
