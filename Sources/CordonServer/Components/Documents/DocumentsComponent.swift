import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSystem
import Foundation
import Logging
import NIOCore

/// Document hand-over between apps (`io.cordon.App.ShareDocument`): the agent resolves the path
/// in the sender's own view (its root, held since it registered), copies the file into a sealed
/// snapshot, and decides the sender's `document.send` and the target's `document.receive` on what
/// the snapshot is; then the running target gets an `OpenDocument` event and fetches that very
/// snapshot as a descriptor (`io.cordon.App.OpenDocument`).
final class DocumentsComponent: AgentComponent {
    /// How many handed-over documents may wait for one target; beyond, the oldest is dropped.
    static let maxWaitingPerTarget = 16
    /// How much snapshot data may wait for all targets together (1 GiB); beyond, the oldest
    /// waiting documents are dropped (docs/PERFORMANCE.md, "Document hand-over").
    static let maxWaitingBytes = 1 << 30

    /// A document waiting for its target to fetch it: the snapshot the decision was made on.
    private struct Waiting {
        let document: OpenedDocument
        let info: DocumentInfo
        /// The target's registration connection.
        let target: ConnectionID
    }

    private unowned let host: any ComponentHost
    /// Waiting documents by id, and their ids oldest first.
    private var waiting: [String: Waiting] = [:]
    private var order: [String] = []
    /// The data of every waiting snapshot, in bytes.
    private var waitingBytes = 0
    /// Each registered app's view of the filesystem by its registration connection: its root,
    /// opened when it registered — while it is still readable: a hardened app (non-dumpable) is
    /// not, to the agent of the same user, once it has made itself so — or why it could not be.
    private var views: [ConnectionID: Result<SenderView, OpenedDocument.Refusal>] = [:]

    init(host: any ComponentHost) {
        self.host = host
    }

    /// Serves `io.cordon.App.OpenDocument`.
    func serveOpen(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(OpenDocumentParameters.self)
        return host.afterAudit(call.encoder) { () throws(CordonError) in
            try openDocument(parameters, call: call)
        }
    }

    /// Serves `io.cordon.App.ShareDocument`.
    func serveShare(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(ShareDocumentParameters.self)
        return shareDocument(parameters, call: call)
    }

    /// Opens the root of an app that registered for itself (an app registered on its behalf by
    /// `cordon run` never shares a document).
    func registered(_ registration: AppRegistration, process: AppProcess) {
        guard registration.managed, !process.onBehalf else { return }
        views[registration.connection] = Result { () throws(OpenedDocument.Refusal) in
            try SenderView(pid: process.identity.pid, pidfd: process.pidfd)
        }
    }

    func connectionClosed(_ id: ConnectionID) {
        for (key, entry) in waiting where entry.target == id { drop(key) }
        views.removeValue(forKey: id)
    }

    func shutdown() {
        for key in Array(waiting.keys) { drop(key) }
        views.removeAll()
    }

    /// `io.cordon.App.ShareDocument`: the agent resolves the path in the sender's view and takes
    /// a sealed snapshot of the file (`OpenedDocument`) off the loop, on the store's thread (a
    /// copy of up to 256 MiB: docs/PERFORMANCE.md, "Document hand-over"); then, back on the loop,
    /// ``handOver(_:_:sender:)`` decides on it.
    private func shareDocument(_ parameters: ShareDocumentParameters, call: ComponentCall) -> CallOutcome {
        let sender: AppRegistration
        let view: SenderView
        do throws(CordonError) {
            sender = try host.verifiedRegistration(call.connection, for: .data)
            switch views[sender.connection] {
            case .success(let found): view = found
            case .failure(let refusal): throw refuse(sender: sender.appId, reason: refusal.description)
            case nil: throw refuse(sender: sender.appId, reason: "the sender's view of the filesystem is unknown")
            }
        } catch {
            return host.afterAudit(call.encoder) { () throws(CordonError) -> ByteBuffer in throw error }
        }
        let path = parameters.path
        let opened = host.storePool.runIfActive(eventLoop: host.loop) {
            Result { () throws(OpenedDocument.Refusal) in try OpenedDocument.open(path, in: view) }
        }
        let loop = host.loop
        let encoder = call.encoder
        return .deferred(
            opened.assumeIsolated().flatMap { [self] result -> EventLoopFuture<ByteBuffer> in
                let outcome = host.afterAudit(encoder) { () throws(CordonError) in
                    try handOver(result, parameters, sender: sender)
                    return encoder.empty()
                }
                switch outcome {
                case .reply(let frame), .close(let frame): return loop.makeSucceededFuture(frame)
                case .deferred(let future): return future
                case .streaming: return loop.makeSucceededFuture(encoder.empty())
                }
            }.flatMapError { _ in
                loop.makeSucceededFuture(
                    encoder.error(CordonError.internalError(reason: "the agent is stopping").varlinkError))
            }.nonisolated())
    }

    /// Decides on the snapshot and hands it over: its types are detected from the snapshot's
    /// bytes; a claimed type the content contradicts is refused. Then `document.send` for the
    /// caller and `document.receive` for the target (with the caller as its source) are decided
    /// on the canonical path's extension and the content type — and on every other type the
    /// content also opens as (a polyglot) —, and the running target gets an `OpenDocument` event.
    private func handOver(
        _ opened: Result<OpenedDocument, OpenedDocument.Refusal>, _ parameters: ShareDocumentParameters,
        sender: AppRegistration
    ) throws(CordonError) {
        let document: OpenedDocument
        switch opened {
        case .success(let snapshot): document = snapshot
        case .failure(let refusal): throw refuse(sender: sender.appId, reason: refusal.description)
        }
        // The sender may have gone while the snapshot was taken.
        guard host.registry.registrations[sender.connection] != nil else {
            document.close()
            throw .notRegistered
        }
        var handedOver = false
        defer { if !handedOver { document.close() } }
        let detectedTypes = ContentSniffer.contentTypes(head: document.head, tail: document.tail)
        let detected = detectedTypes[0]
        if let claimed = parameters.contentType, ContentSniffer.contradicts(claimed: claimed, detected: detected) {
            throw refuse(
                sender: sender.appId,
                reason: "the content of \(document.canonicalPath) is \(detected), not the claimed \(claimed)")
        }
        // A generic claim (none, or application/octet-stream) is decided as what the content is.
        let contentType =
            ContentSniffer.isGeneric(parameters.contentType) ? detected : parameters.contentType ?? detected
        // What else the content opens as is decided too: a PNG that is also a PDF is a PDF.
        let alsoTypes = detectedTypes.dropFirst().filter { $0 != contentType }
        let senderFacts = AppFacts(id: sender.appId, managed: sender.managed)
        // A managed target is reached only through a managed registration: an impostor registered
        // under its id (unmanaged) never receives its documents.
        let targetIsManaged = host.isManagedByPolicy(parameters.target)
        let target = host.registry.all.first {
            $0.appId == parameters.target && $0.subscriber != nil && ($0.managed || !targetIsManaged)
        }
        let targetFacts = AppFacts(
            id: parameters.target, managed: target?.managed ?? host.isManagedByPolicy(parameters.target))
        for type in [contentType] + alsoTypes {
            let send = host.decide(
                .documentSend, app: senderFacts, peer: targetFacts, length: nil, contentType: type,
                location: document.canonicalPath)
            guard send.allowed else { throw host.denial(send) }
        }
        for type in [contentType] + alsoTypes {
            let receive = host.decide(
                .documentReceive, app: targetFacts, peer: senderFacts, length: nil, contentType: type,
                location: document.canonicalPath)
            guard receive.allowed else { throw host.denial(receive) }
        }
        guard let target, let subscriberID = target.subscriber, let subscriber = host.subscriber(subscriberID) else {
            throw .targetNotRunning(appId: parameters.target)
        }
        let info = DocumentInfo(
            path: document.canonicalPath, contentType: contentType, sender: sender.appId, id: UUID().uuidString)
        keep(Waiting(document: document, info: info, target: target.connection))
        handedOver = true
        let event = CordonEvent(
            seq: host.lastSeq, payload: .openDocument(info), reason: .userRequest, time: host.clock(),
            state: host.lifecycleState)
        let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
            SubscribeReply(event: event), continues: true)
        host.deliver(frame, to: subscriber)
        host.logger.info(
            "document handed over",
            metadata: ["from": "\(sender.appId)", "to": "\(target.appId)", "contentType": "\(contentType)"])
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

    /// Keeps a handed-over document for its target, dropping the target's oldest beyond its cap,
    /// and the oldest of all while more than ``maxWaitingBytes`` of data waits.
    private func keep(_ entry: Waiting) {
        let mine = order.filter { waiting[$0]?.target == entry.target }
        if mine.count >= Self.maxWaitingPerTarget, let oldest = mine.first { drop(oldest) }
        let id = entry.info.id ?? ""
        waiting[id] = entry
        order.append(id)
        waitingBytes += entry.document.dataBytes
        while waitingBytes > Self.maxWaitingBytes, let oldest = order.first, oldest != id { drop(oldest) }
    }

    private func drop(_ id: String) {
        if let entry = waiting.removeValue(forKey: id) {
            waitingBytes -= entry.document.dataBytes
            entry.document.close()
        }
        order.removeAll { $0 == id }
    }

    /// `io.cordon.App.OpenDocument`: the reply, written here with `sendmsg` and the document's
    /// descriptor attached (SCM_RIGHTS); returns what `sendmsg` did not take, for the channel to
    /// write after it. Only the target's own process (its registration, or a token of it) gets it.
    private func openDocument(_ parameters: OpenDocumentParameters, call: ComponentCall) throws(CordonError)
        -> ByteBuffer
    {
        let registration = try host.verifiedRegistration(token: parameters.token, caller: call.connection, for: .data)
        guard let entry = waiting[parameters.id], entry.target == registration.connection else {
            throw .denied(
                action: PolicyAction.documentReceive.rawValue,
                reason: "no document \(parameters.id) waits for \(registration.appId)", rules: [])
        }
        var frame = call.encoder.reply(OpenDocumentReply(document: entry.info))
        let sent: Int
        do {
            let socket = try socketDescriptor(of: call.connection.channel)
            sent = try DescriptorPassing.send(
                Array(frame.readableBytesView), on: socket, attaching: entry.document.descriptor)
        } catch {
            throw .denied(
                action: PolicyAction.documentReceive.rawValue,
                reason: "the document cannot be handed over: \(error.description)", rules: [])
        }
        drop(parameters.id)
        frame.moveReaderIndex(forwardBy: sent)
        return frame
    }

    /// The descriptor of a connection's socket, found by its kernel cookie.
    private func socketDescriptor(of channel: any Channel) throws(SystemError) -> CInt {
        guard channel is any SocketOptionProvider else {
            throw SystemError(operation: "read SO_COOKIE", errno: ENOTSOCK)
        }
        guard let cookie = DirectSocket.cookieThroughNIO(channel) else {
            throw SystemError(operation: "read SO_COOKIE", errno: EINVAL)
        }
        return try DescriptorPassing.socket(withCookie: cookie)
    }
}
