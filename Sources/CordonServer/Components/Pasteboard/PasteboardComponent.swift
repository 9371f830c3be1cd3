import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import Logging

/// The managed pasteboard (`io.cordon.Pasteboard`): content sealed under a per-session key in
/// locked memory, copy and paste decided by the policy, cleared on revocation and, as the
/// copying app's policy says, on lock.
final class PasteboardComponent: InterfaceComponent {
    private unowned let host: any ComponentHost
    private var pasteboard = ManagedPasteboard()

    init(host: any ComponentHost) {
        self.host = host
    }

    private var logger: Logger { host.logger }

    func serve(_ method: Method.Pasteboard, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        switch method {
        case .copy:
            let parameters = try call.parameters(PasteboardCopyParameters.self)
            return host.afterAudit(encoder) { () throws(CordonError) in
                encoder.reply(try copy(parameters, connection: call.connection))
            }
        case .paste:
            return host.afterAudit(encoder) { () throws(CordonError) in
                encoder.reply(try paste(connection: call.connection))
            }
        case .clear:
            _ = try typed { () throws(CordonError) in try host.verifiedRegistration(call.connection, for: .data) }
            clear()
            return .reply(encoder.empty())
        }
    }
    /// `io.cordon.Pasteboard.Copy`: decides `pasteboard.copy` for the caller and seals the
    /// content, cut to the policy's character limit.
    private func copy(_ parameters: PasteboardCopyParameters, connection: AgentConnection) throws(CordonError)
        -> PasteboardCopyReply
    {
        // Only a verified managed app reaches the managed pasteboard (docs/THREAT-MODEL.md).
        _ = try host.verifiedRegistration(connection, for: .data)
        let app = host.appFacts(of: connection)
        let decision = host.decide(
            .pasteboardCopy, app: app, peer: nil, length: parameters.content.count, contentType: parameters.mimeType)
        guard decision.allowed else { throw host.denial(decision) }
        let truncated = try pasteboard.copy(
            parameters.content, mimeType: parameters.mimeType ?? "text/plain",
            source: ManagedPasteboard.Source(appId: app.id, managed: app.managed),
            truncateTo: decision.truncationLimit)
        return PasteboardCopyReply(truncatedTo: truncated, decision: DecisionsComponent.wire(decision))
    }

    /// `io.cordon.Pasteboard.Paste`: decides `pasteboard.paste` with the copying app as the
    /// source, and hands out the content cut to the policy's limit.
    private func paste(connection: AgentConnection) throws(CordonError) -> PasteboardPasteReply {
        _ = try host.verifiedRegistration(connection, for: .data)
        // Nothing leaves the pasteboard while the container is locked.
        guard host.lifecycleState == .unlocked else { throw .locked }
        guard let summary = pasteboard.summary else { throw .pasteboardEmpty }
        let app = host.appFacts(of: connection)
        let source = AppFacts(id: summary.source.appId, managed: summary.source.managed)
        let decision = host.decide(
            .pasteboardPaste, app: app, peer: source, length: summary.characters, contentType: nil)
        guard decision.allowed else { throw host.denial(decision) }
        let limit = decision.truncationLimit
        guard let clipping = try pasteboard.paste(truncateTo: limit) else { throw .pasteboardEmpty }
        let truncated = limit.flatMap { summary.characters > $0 ? $0 : nil }
        return PasteboardPasteReply(
            content: clipping.content, mimeType: clipping.mimeType, source: clipping.source.appId,
            truncatedTo: truncated, decision: DecisionsComponent.wire(decision))
    }

    /// `io.cordon.Pasteboard.Clear`.
    private func clear() {
        pasteboard.clear()
        logger.info("pasteboard cleared on request")
    }

    /// Clears the pasteboard on a lock when the copying app's policy says so, and on every revocation or wipe
    /// (then with a new session key).
    func observe(_ event: CordonEvent) {
        switch event.kind {
        case .encryptionKeyUnavailable, .wiped:
            if !pasteboard.isEmpty { logger.info("pasteboard cleared: the key was revoked") }
            pasteboard.rotateKey()
        case .didLock:
            // Per app: what an app copied is cleared when that app's policy (base and its
            // overrides) says `clearOnLock`.
            guard let summary = pasteboard.summary,
                host.policy.policy.forApp(summary.source.appId)[PolicyKeys.Pasteboard.clearOnLock].value
            else { return }
            logger.info(
                "pasteboard cleared on lock (pasteboard.clearOnLock)", metadata: ["source": "\(summary.source.appId)"])
            pasteboard.clear()
        default:
            break
        }
    }
}
