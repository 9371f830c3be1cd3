/// Names the rules of one document: its source and the pointer prefix of the sections being read
/// (`""` for the document's top level, `/overrides/2` for an override).
struct RuleLocator {
    var source: PolicySource
    var prefix: String

    /// The rule at `pointer` below the prefix.
    func callAsFunction(_ pointer: String) -> RuleReference {
        RuleReference(source: source, pointer: prefix + pointer)
    }

    /// Sets `setting` from one document's `value` at `pointer`, when the document sets it.
    func assign<Value>(_ setting: inout ResolvedSetting<Value>, _ value: Value?, _ pointer: String) {
        if let value { setting = ResolvedSetting(value, at: self(pointer)) }
    }

    /// Sets an optional-valued setting (a bound or an allow-list) from one document's `value`.
    func assignBound<Value>(_ setting: inout ResolvedSetting<Value?>, _ value: Value?, _ pointer: String) {
        if let value { setting = ResolvedSetting(.some(value), at: self(pointer)) }
    }
}

extension EffectivePolicySettings {
    /// The settings one document (or one of its overrides) sets, at the pointers `at` names.
    init(
        lock: LockSection?, pasteboard: PasteboardSection?, documents: DocumentsSection?,
        storage: StorageSection?, conditions: ConditionsSection?, at locator: RuleLocator
    ) {
        self.init()
        if let lock { self.lock = EffectiveLockSettings(lock, at: locator) }
        if let pasteboard { self.pasteboard = EffectivePasteboardSettings(pasteboard, at: locator) }
        if let documents { self.documents = EffectiveDocumentsSettings(documents, at: locator) }
        if let storage { locator.assign(&self.storage.dataAccess, storage.dataAccess, "/storage/dataAccess") }
        if let conditions { self.conditions = EffectiveConditionsSettings(conditions, at: locator) }
    }
}

extension EffectiveLockSettings {
    init(_ section: LockSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&idleTimeoutSeconds, section.idleTimeoutSeconds, "/lock/idleTimeoutSeconds")
        locator.assign(&onScreenLock, section.onScreenLock, "/lock/onScreenLock")
        locator.assign(&onSuspend, section.onSuspend, "/lock/onSuspend")
        locator.assignBound(&reauthGraceSeconds, section.reauthGraceSeconds, "/lock/reauthGraceSeconds")
        locator.assign(&discardKeyOnLock, section.discardKeyOnLock, "/lock/discardKeyOnLock")
        locator.assignBound(&ackDeadlineMs, section.ackDeadlineMs, "/lock/ackDeadlineMs")
        locator.assign(&onAckTimeout, section.onAckTimeout, "/lock/onAckTimeout")
    }
}

extension EffectivePasteboardSettings {
    init(_ section: PasteboardSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&copyOut, section.copyOut, "/pasteboard/copyOut")
        locator.assignBound(&maxChars, section.maxChars, "/pasteboard/maxChars")
        locator.assign(&clearOnLock, section.clearOnLock, "/pasteboard/clearOnLock")
    }
}

extension EffectiveDocumentsSettings {
    init(_ section: DocumentsSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&sendTo, section.sendTo, "/documents/sendTo")
        locator.assign(&receiveFrom, section.receiveFrom, "/documents/receiveFrom")
        locator.assignBound(&allowedTargets, section.allowedTargets.map { Set($0) }, "/documents/allowedTargets")
        locator.assignBound(&allowedSources, section.allowedSources.map { Set($0) }, "/documents/allowedSources")
        locator.assign(&saveCopies, section.saveCopies, "/documents/saveCopies")
        let clauses = section.saveLocations.map { SaveLocationClauses(clauses: [Set($0)]) }
        locator.assignBound(&saveLocations, clauses, "/documents/saveLocations")
        let blocked = section.blockedTypes.map { Set($0.compactMap(BlockedTypeMatcher.normalized)) }
        locator.assign(&blockedTypes, blocked, "/documents/blockedTypes")
    }
}

extension EffectiveConditionsSettings {
    init(_ section: ConditionsSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&debuggerAttached, section.debuggerAttached, "/conditions/debuggerAttached")
        locator.assign(&preloadInjected, section.preloadInjected, "/conditions/preloadInjected")
        locator.assign(&executableMismatch, section.executableMismatch, "/conditions/executableMismatch")
    }
}

extension EffectiveAppsSettings {
    /// One document's `apps` section; bindings from user documents are dropped.
    init(_ section: AppsSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&unknown, section.unknown, "/apps/unknown")
        guard locator.source.origin != .user, let bindings = section.managed else { return }
        for (index, binding) in bindings.enumerated() {
            let requirement = ManagedAppRequirement(
                executables: Set(binding.executables),
                sha256: binding.sha256.isEmpty ? nil : Set(binding.sha256.map { $0.lowercased() }))
            let setting = ResolvedSetting(requirement, at: locator("/apps/managed/\(index)"))
            managed[binding.id] = managed[binding.id].map { $0.combining(setting) { $0.intersecting($1) } } ?? setting
        }
    }
}

extension EffectivePasscodeSettings {
    init(_ section: PasscodeSection, at locator: RuleLocator) {
        self.init()
        locator.assign(&minLength, section.minLength, "/passcode/minLength")
        locator.assign(&kind, section.kind, "/passcode/kind")
        locator.assign(&allowSimple, section.allowSimple, "/passcode/allowSimple")
        locator.assignBound(&maxAttempts, section.maxAttempts, "/passcode/maxAttempts")
        locator.assign(&onMaxAttempts, section.onMaxAttempts, "/passcode/onMaxAttempts")
    }
}
