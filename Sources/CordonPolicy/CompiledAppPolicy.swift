/// One app's settings, compiled for decisions: values unwrapped, lists turned into sets and
/// matchers, and every reason sentence, rule list and obligation built in advance, so a decision
/// only compares and copies references.
final class CompiledAppPolicy: Sendable {
    let pasteboard: CompiledPasteboard
    let send: CompiledFlow
    let receive: CompiledFlow
    let save: CompiledSave
    let blocked: BlockedTypeMatcher
    let debuggerAttached: CompiledCondition
    let preloadInjected: CompiledCondition
    let executableMismatch: CompiledCondition

    init(_ settings: EffectivePolicySettings) {
        typealias Documents = PolicyKeys.Documents
        typealias Conditions = PolicyKeys.Conditions
        pasteboard = CompiledPasteboard(
            copyOut: settings[PolicyKeys.Pasteboard.copyOut], maxChars: settings[PolicyKeys.Pasteboard.maxChars])
        send = CompiledFlow(
            scope: settings[Documents.sendTo], list: settings[Documents.allowedTargets],
            scopeName: Documents.sendTo.name, listName: Documents.allowedTargets.name, peer: "target")
        receive = CompiledFlow(
            scope: settings[Documents.receiveFrom], list: settings[Documents.allowedSources],
            scopeName: Documents.receiveFrom.name, listName: Documents.allowedSources.name, peer: "source")
        save = CompiledSave(saveCopies: settings[Documents.saveCopies], locations: settings[Documents.saveLocations])
        blocked = BlockedTypeMatcher(settings[Documents.blockedTypes], setting: Documents.blockedTypes.name)
        debuggerAttached = CompiledCondition(settings[Conditions.debuggerAttached], name: "debuggerAttached")
        preloadInjected = CompiledCondition(settings[Conditions.preloadInjected], name: "preloadInjected")
        executableMismatch = CompiledCondition(settings[Conditions.executableMismatch], name: "executableMismatch")
    }
}

/// `pasteboard.copyOut` and `maxChars` with the sentences for every outcome at this level.
final class CompiledPasteboard: Sendable {
    let level: PasteboardLevel
    /// `maxChars`, or `Int.max` when unlimited.
    let maxChars: Int
    let truncation: [Obligation]
    let levelRules: [RuleReference]
    let truncationRules: [RuleReference]
    let copyReason: String
    let copyTruncatedReason: String
    let sameAppReason: String
    let crossAppReason: String
    let crossAppTruncatedReason: String
    let unmanagedSourceReason: String
    let unmanagedAppReason: String

    init(copyOut: ResolvedSetting<PasteboardLevel>, maxChars limit: ResolvedSetting<Int?>) {
        level = copyOut.value
        maxChars = limit.value ?? .max
        truncation = [.truncate(maxChars: maxChars)]
        levelRules = copyOut.rules
        truncationRules = PolicyFormat.sortedUnion(copyOut.rules, limit.rules, by: <)
        let setting = "pasteboard.copyOut is \(level.policyDescription)"
        let truncated = "; pasteboard.maxChars is \(maxChars), so the content is truncated"
        copyReason = "\(setting); copying into the managed pasteboard is always allowed"
        copyTruncatedReason = copyReason + truncated
        sameAppReason = "\(setting); pasting within the same app is always allowed"
        switch level {
        case .any: crossAppReason = setting
        case .managedWithPasteIn: crossAppReason = "\(setting) and the pasting app is managed"
        case .managed: crossAppReason = "\(setting) and both apps are managed"
        case .blocked: crossAppReason = "\(setting) and the paste crosses apps"
        }
        crossAppTruncatedReason = crossAppReason + truncated
        unmanagedSourceReason = "\(setting) and the source is unmanaged"
        unmanagedAppReason = "\(setting) and the pasting app is unmanaged"
    }
}

/// `sendTo` + `allowedTargets`, or `receiveFrom` + `allowedSources`.
final class CompiledFlow: Sendable {
    let scope: ShareScope
    let scopeRules: [RuleReference]
    /// The intersected allow-list; nil when no document sets one.
    let allowed: Set<String>?
    /// Each document's list, to name the ones that leave a peer out.
    let lists: [SettingCandidate<Set<String>?>]
    let allowRules: [RuleReference]
    let allowReason: String
    let noneReason: String
    let unmanagedReason: String
    let notListedReason: String

    init(
        scope: ResolvedSetting<ShareScope>, list: ResolvedSetting<Set<String>?>, scopeName: String,
        listName: String, peer: String
    ) {
        self.scope = scope.value
        scopeRules = scope.rules
        allowed = list.value
        lists = list.candidates
        allowRules = PolicyFormat.sortedUnion(scope.rules, list.rules, by: <)
        let setting = "\(scopeName) is \(scope.value.policyDescription)"
        let listed = list.value == nil ? "" : " and \(listName) lists the \(peer)"
        switch scope.value {
        case .any: allowReason = setting + listed
        case .managed, .none: allowReason = "\(setting) and the \(peer) is managed" + listed
        }
        noneReason = setting
        unmanagedReason = "\(setting) and the \(peer) is unmanaged"
        notListedReason = "\(listName) does not list the \(peer)"
    }

    /// The documents whose allow-list leaves out `peer` (nil: no peer, every list leaves it out).
    func rulesExcluding(_ peer: String?) -> [RuleReference] {
        lists.compactMap { candidate in
            guard let peer, candidate.value?.contains(peer) ?? true else { return candidate.rule }
            return nil
        }
    }
}
