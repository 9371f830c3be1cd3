import CordonPolicy
import CordonProtocol
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

    /// `io.cordon.App.ShareDocument`: `document.send` for the caller, `document.receive` for the
    /// target (with the caller as its source), then an `OpenDocument` event to the running target.
    private func shareDocument(_ parameters: ShareDocumentParameters, connection: AgentConnection) throws(CordonError) {
        let sender = try host.verifiedRegistration(connection, for: .data)
        guard parameters.path.hasPrefix("/") else {
            throw .denied(action: PolicyAction.documentSend.rawValue, reason: "the path must be absolute", rules: [])
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parameters.path, isDirectory: &isDirectory), !isDirectory.boolValue
        else {
            throw .denied(
                action: PolicyAction.documentSend.rawValue, reason: "\(parameters.path) is not a file", rules: [])
        }
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
            .documentSend, app: senderFacts, peer: targetFacts, length: nil, contentType: parameters.contentType)
        guard send.allowed else { throw host.denial(send) }
        let receive = host.decide(
            .documentReceive, app: targetFacts, peer: senderFacts, length: nil, contentType: parameters.contentType)
        guard receive.allowed else { throw host.denial(receive) }
        guard let target, let subscriberID = target.subscriber, let subscriber = host.subscriber(subscriberID) else {
            throw .targetNotRunning(appId: parameters.target)
        }
        let event = CordonEvent(
            seq: host.lastSeq, kind: .openDocument, reason: .userRequest, time: host.clock(),
            state: host.lifecycleState,
            document: DocumentInfo(path: parameters.path, contentType: parameters.contentType, sender: sender.appId))
        let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
            SubscribeReply(event: event), continues: true)
        host.deliver(frame, to: subscriber)
        host.logger.info(
            "document handed over",
            metadata: [
                "from": "\(sender.appId)", "to": "\(target.appId)", "contentType": "\(parameters.contentType ?? "-")",
            ])
    }
}
