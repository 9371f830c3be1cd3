extension PolicyEvaluator {
    /// `pasteboard.copy`: always allowed into the managed pasteboard; truncated beyond `maxChars`.
    func copy(_ request: DecisionRequest) -> PolicyDecision {
        let pasteboard = compiled.settings(for: request.app.id).pasteboard
        if let length = request.length, length > pasteboard.maxChars {
            return .allow(
                .pasteboardCopy, pasteboard.copyTruncatedReason, pasteboard.truncationRules, pasteboard.truncation)
        }
        return .allow(.pasteboardCopy, pasteboard.copyReason, pasteboard.levelRules)
    }

    /// `pasteboard.paste`: under the pasting app's settings and, when overrides name the source,
    /// the source's too (most restrictive wins).
    func paste(_ request: DecisionRequest) -> PolicyDecision {
        let own = compiled.settings(for: request.app.id)
        guard let peer = request.peer, peer.id != request.app.id, compiled.isOverridden(peer.id) else {
            return paste(request, under: own.pasteboard)
        }
        let source = compiled.settings(for: peer.id)
        guard compiled.isOverridden(request.app.id) else { return paste(request, under: source.pasteboard) }
        let first = paste(request, under: own.pasteboard)
        guard first.allowed else { return first }
        let second = paste(request, under: source.pasteboard)
        guard second.allowed else { return second }
        return Self.stricterAllowance(first, second)
    }

    /// `pasteboard.paste` under one app's compiled pasteboard settings.
    @inline(__always)
    func paste(_ request: DecisionRequest, under pasteboard: CompiledPasteboard) -> PolicyDecision {
        let app = request.app
        if let peer = request.peer, peer.id == app.id {
            return .allow(.pasteboardPaste, pasteboard.sameAppReason, pasteboard.levelRules)
        }
        switch pasteboard.level {
        case .any:
            break
        case .managedWithPasteIn:
            guard app.managed else {
                return .deny(.pasteboardPaste, pasteboard.unmanagedAppReason, pasteboard.levelRules)
            }
        case .managed:
            guard request.peer?.managed ?? false else {
                return .deny(.pasteboardPaste, pasteboard.unmanagedSourceReason, pasteboard.levelRules)
            }
            guard app.managed else {
                return .deny(.pasteboardPaste, pasteboard.unmanagedAppReason, pasteboard.levelRules)
            }
        case .blocked:
            return .deny(.pasteboardPaste, pasteboard.crossAppReason, pasteboard.levelRules)
        }
        if let length = request.length, length > pasteboard.maxChars {
            return .allow(
                .pasteboardPaste, pasteboard.crossAppTruncatedReason, pasteboard.truncationRules,
                pasteboard.truncation)
        }
        return .allow(.pasteboardPaste, pasteboard.crossAppReason, pasteboard.levelRules)
    }

    /// Two allowances of one action: the one with the tighter truncation, naming both rule lists.
    static func stricterAllowance(_ first: PolicyDecision, _ second: PolicyDecision) -> PolicyDecision {
        var result = first
        switch (first.truncationLimit, second.truncationLimit) {
        case (.some(let lhs), .some(let rhs)) where rhs < lhs: result = second
        case (.none, .some): result = second
        default: break
        }
        result.rules = PolicyFormat.sortedUnion(first.rules, second.rules, by: <)
        return result
    }
}

extension PolicyEvaluator {
    /// `document.send` or `document.receive` under the acting app's `flow` (scope + allow-list)
    /// and `blockedTypes` (the content type, and the extension of the document's path when given).
    func share(_ request: DecisionRequest, _ flow: CompiledFlow, _ blocked: BlockedTypeMatcher) -> PolicyDecision {
        let action = request.action
        switch flow.scope {
        case .none:
            return .deny(action, flow.noneReason, flow.scopeRules)
        case .managed:
            guard request.peer?.managed ?? false else { return .deny(action, flow.unmanagedReason, flow.scopeRules) }
        case .any:
            break
        }
        if let allowed = flow.allowed {
            guard let peer = request.peer, allowed.contains(peer.id) else {
                return .deny(action, flow.notListedReason, flow.rulesExcluding(request.peer?.id))
            }
        }
        if let contentType = request.contentType, let entry = blocked.match(contentType: contentType) {
            return .deny(action, entry.reason, entry.rules)
        }
        if let location = request.location, let entry = blocked.match(fileName: location) {
            return .deny(action, entry.reason, entry.rules)
        }
        // `.pdf` blocks PDF content under any name.
        for name in request.contentType.map(ContentSniffer.fileNames) ?? [] {
            if let entry = blocked.match(fileName: name) { return .deny(action, entry.reason, entry.rules) }
        }
        return .allow(action, flow.allowReason, flow.allowRules)
    }

    /// `document.save`: `saveCopies`, then `saveLocations`, then `blockedTypes` (content type and
    /// the location's extension).
    func save(_ request: DecisionRequest) -> PolicyDecision {
        let settings = compiled.settings(for: request.app.id)
        let save = settings.save
        if save.saveCopies == .block {
            return .deny(.documentSave, save.blockReason, save.saveCopiesRules)
        }
        if let clauses = save.clauses {
            guard let location = request.location else {
                return .deny(.documentSave, save.noLocationReason, save.locationRules)
            }
            if !clauses.allSatisfy({ $0.matches(location) }) {
                let failing = clauses.filter { !$0.matches(location) }.flatMap(\.rules)
                return .deny(.documentSave, save.outsideReason, Array(Set(failing)).sorted())
            }
        }
        if let contentType = request.contentType, let entry = settings.blocked.match(contentType: contentType) {
            return .deny(.documentSave, entry.reason, entry.rules)
        }
        if let location = request.location, let entry = settings.blocked.match(fileName: location) {
            return .deny(.documentSave, entry.reason, entry.rules)
        }
        return .allow(.documentSave, save.allowReason, save.allowRules)
    }
}
