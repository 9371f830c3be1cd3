import CordonPolicy
import CordonProtocol
import Foundation
import Logging
import NIOCore

extension Agent {
    /// `io.cordon.App.ShareDocument`: `document.send` for the caller, `document.receive` for the
    /// target (with the caller as its source), then an `OpenDocument` event to the running target.
    func shareDocument(_ parameters: ShareDocumentParameters, connection: AgentConnection) throws(CordonError) {
        guard let sender = registry.registrations[connection.id] else { throw .notRegistered }
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
        let target = registry.all.first { $0.appId == parameters.target && $0.subscriber != nil }
        let targetFacts = AppFacts(
            id: parameters.target, managed: target?.managed ?? isManagedByPolicy(parameters.target))
        let send = decide(
            .documentSend, app: senderFacts, peer: targetFacts, length: nil, contentType: parameters.contentType)
        guard send.allowed else { throw denial(send) }
        let receive = decide(
            .documentReceive, app: targetFacts, peer: senderFacts, length: nil, contentType: parameters.contentType)
        guard receive.allowed else { throw denial(receive) }
        guard let target, let subscriberID = target.subscriber, let subscriber = subscribers[subscriberID] else {
            throw .targetNotRunning(appId: parameters.target)
        }
        let event = WireEvent(
            seq: machine.seq, kind: .openDocument, reason: .userRequest, time: clock(), state: machine.state,
            document: DocumentInfo(path: parameters.path, contentType: parameters.contentType, sender: sender.appId))
        let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
            SubscribeReply(event: event), continues: true)
        deliver(frame, to: subscriber)
        logger.info(
            "document handed over",
            metadata: [
                "from": "\(sender.appId)", "to": "\(target.appId)", "contentType": "\(parameters.contentType ?? "-")",
            ])
    }
}
