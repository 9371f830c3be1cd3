import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Logging

extension Agent {
    /// `io.cordon.Pasteboard.Copy`: decides `pasteboard.copy` for the caller and seals the
    /// content, cut to the policy's character limit.
    func pasteboardCopy(_ parameters: PasteboardCopyParameters, connection: AgentConnection) throws(CordonError)
        -> PasteboardCopyReply
    {
        let app = appFacts(of: connection)
        let decision = decide(
            .pasteboardCopy, app: app, peer: nil, length: parameters.content.count, contentType: parameters.mimeType)
        guard decision.allowed else { throw denial(decision) }
        let truncated = try pasteboard.copy(
            parameters.content, mimeType: parameters.mimeType ?? "text/plain",
            source: ManagedPasteboard.Source(appId: app.id, managed: app.managed),
            truncateTo: decision.truncationLimit)
        return PasteboardCopyReply(truncatedTo: truncated, decision: Self.wire(decision))
    }

    /// `io.cordon.Pasteboard.Paste`: decides `pasteboard.paste` with the copying app as the
    /// source, and hands out the content cut to the policy's limit.
    func pasteboardPaste(connection: AgentConnection) throws(CordonError) -> PasteboardPasteReply {
        guard let summary = pasteboard.summary else { throw .pasteboardEmpty }
        let app = appFacts(of: connection)
        let source = AppFacts(id: summary.source.appId, managed: summary.source.managed)
        let decision = decide(.pasteboardPaste, app: app, peer: source, length: summary.characters, contentType: nil)
        guard decision.allowed else { throw denial(decision) }
        let limit = decision.truncationLimit
        guard let clipping = try pasteboard.paste(truncateTo: limit) else { throw .pasteboardEmpty }
        let truncated = limit.flatMap { summary.characters > $0 ? $0 : nil }
        return PasteboardPasteReply(
            content: clipping.content, mimeType: clipping.mimeType, source: clipping.source.appId,
            truncatedTo: truncated, decision: Self.wire(decision))
    }

    /// `io.cordon.Pasteboard.Clear`.
    func pasteboardClear() {
        pasteboard.clear()
        logger.info("pasteboard cleared on request")
    }

    /// Clears the pasteboard on a lock when the copying app's policy says so, and on every revocation or wipe
    /// (then with a new session key).
    func pasteboardObserve(_ event: WireEvent) {
        switch event.kind {
        case .encryptionKeyUnavailable, .wiped:
            if !pasteboard.isEmpty { logger.info("pasteboard cleared: the key was revoked") }
            pasteboard.rotateKey()
        case .didLock:
            // Per app: what an app copied is cleared when that app's policy (base and its
            // overrides) says `clearOnLock`.
            guard let summary = pasteboard.summary,
                policy.policy.forApp(summary.source.appId).pasteboard.clearOnLock.value
            else { return }
            logger.info(
                "pasteboard cleared on lock (pasteboard.clearOnLock)", metadata: ["source": "\(summary.source.appId)"])
            pasteboard.clear()
        default:
            break
        }
    }

    /// The caller as the policy sees it: its registration, or an unmanaged nobody.
    func appFacts(of connection: AgentConnection) -> AppFacts {
        let registration = registry.registrations[connection.id]
        return AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
    }

    /// Decides one action and audits it as `check` does (every deny; allows when configured).
    func decide(_ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?)
        -> PolicyDecision
    {
        let request = DecisionRequest(
            action: action, app: app, peer: peer, location: nil, contentType: contentType, length: length)
        let decision = policy.decide(request)
        auditDecision(decision, appId: app.id.isEmpty ? nil : app.id)
        return decision
    }

    /// The typed error for a denied decision.
    func denial(_ decision: PolicyDecision) -> CordonError {
        .denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules.map(\.description))
    }
}
