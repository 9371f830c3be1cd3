import CordonPolicy
import CordonProtocol
import CordonSystem
import Foundation
import Logging
import NIOCore

/// Document hand-over between apps (`io.cordon.App.ShareDocument`): the sender's `document.send`
/// and the target's `document.receive` are decided, then the running target gets an
/// `OpenDocument` event.
final class DocumentsComponent: AgentComponent {
    let methods: [Method] = [.shareDocument]

    private unowned let host: any ComponentHost

    init(host: any ComponentHost) {
        self.host = host
    }

    func serve(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(ShareDocumentParameters.self)
        return host.afterAudit(call.encoder) { () throws(CordonError) in
            try shareDocument(parameters, connection: call.connection)
            return call.encoder.empty()
        }
    }

    /// `io.cordon.App.ShareDocument`: the agent opens the file itself (`OpenedDocument`: the
    /// canonical path, `O_NOFOLLOW`, a regular file) and detects its type from the content; a
    /// claimed type the content contradicts is refused. Then `document.send` for the caller and
    /// `document.receive` for the target (with the caller as its source) are decided on the
    /// canonical path's extension and the content type, and the running target gets an
    /// `OpenDocument` event.
    private func shareDocument(_ parameters: ShareDocumentParameters, connection: AgentConnection) throws(CordonError) {
        let sender = try host.verifiedRegistration(connection, for: .data)
        let document: OpenedDocument
        do {
            document = try OpenedDocument.open(parameters.path)
        } catch {
            throw refuse(sender: sender.appId, reason: error.description)
        }
        defer { document.close() }
        let detected = ContentSniffer.contentType(of: document.head)
        if let claimed = parameters.contentType, ContentSniffer.contradicts(claimed: claimed, detected: detected) {
            throw refuse(
                sender: sender.appId,
                reason: "the content of \(document.canonicalPath) is \(detected), not the claimed \(claimed)")
        }
        // A generic claim (none, or application/octet-stream) is decided as what the content is.
        let contentType = ContentSniffer.isGeneric(parameters.contentType) ? detected : parameters.contentType
        let senderFacts = AppFacts(id: sender.appId, managed: sender.managed)
        // A managed target is reached only through a managed registration: an impostor registered
        // under its id (unmanaged) never receives its documents.
        let targetIsManaged = host.isManagedByPolicy(parameters.target)
        let target = host.registry.all.first {
            $0.appId == parameters.target && $0.subscriber != nil && ($0.managed || !targetIsManaged)
        }
        let targetFacts = AppFacts(
            id: parameters.target, managed: target?.managed ?? host.isManagedByPolicy(parameters.target))
        let send = host.decide(
            .documentSend, app: senderFacts, peer: targetFacts, length: nil, contentType: contentType,
            location: document.canonicalPath)
        guard send.allowed else { throw host.denial(send) }
        let receive = host.decide(
            .documentReceive, app: targetFacts, peer: senderFacts, length: nil, contentType: contentType,
            location: document.canonicalPath)
        guard receive.allowed else { throw host.denial(receive) }
        guard let target, let subscriberID = target.subscriber, let subscriber = host.subscriber(subscriberID) else {
            throw .targetNotRunning(appId: parameters.target)
        }
        let event = CordonEvent(
            seq: host.lastSeq, kind: .openDocument, reason: .userRequest, time: host.clock(),
            state: host.lifecycleState,
            document: DocumentInfo(path: document.canonicalPath, contentType: contentType, sender: sender.appId))
        let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
            SubscribeReply(event: event), continues: true)
        host.deliver(frame, to: subscriber)
        host.logger.info(
            "document handed over",
            metadata: ["from": "\(sender.appId)", "to": "\(target.appId)", "contentType": "\(contentType ?? "-")"])
    }

    /// A `document.send` refused before the policy is asked (the file, or its type), audited.
    private func refuse(sender: String, reason: String) -> CordonError {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .decision, appId: sender, action: PolicyAction.documentSend.rawValue,
                outcome: "deny", reason: reason, rules: [])
        ])
        return .denied(action: PolicyAction.documentSend.rawValue, reason: reason, rules: [])
    }
}
