import CordonProtocol

/// The managed pasteboard (`io.cordon.Pasteboard`): content lives only in the agent's memory,
/// and the policy's `pasteboard` section decides who may paste it and how much of it.
///
/// ```swift
/// let copied = try await app.pasteboard.copy(selection)
/// if let kept = copied.truncatedTo { showNote("only \(kept) characters were copied") }
/// let pasted = try await app.pasteboard.paste()      // throws CordonError.denied when refused
/// insert(pasted.content)
/// ```
/// From an app the calls carry its registration (managed or not); from `CordonClient` they come
/// from an unregistered, unmanaged client.
public struct CordonPasteboard: Sendable {
    let connection: VarlinkClientConnection

    /// What a copy did.
    public struct Copied: Sendable, Equatable {
        /// Set when the policy's character limit cut the content to this many characters.
        public var truncatedTo: Int?
        public var decision: CordonDecision
    }

    /// What a paste returned.
    public struct Pasted: Sendable, Equatable {
        public var content: String
        public var mimeType: String
        /// The app that copied it ("" for an unregistered client).
        public var source: String
        /// Set when the policy's character limit cut the content to this many characters.
        public var truncatedTo: Int?
        public var decision: CordonDecision
    }

    /// Copies `content`; throws `CordonError.contentTooLarge` beyond the size limit.
    public func copy(_ content: String, mimeType: String = "text/plain") async throws -> Copied {
        let reply = try await connection.call(
            .copy, PasteboardCopyParameters(content: content, mimeType: mimeType), returning: PasteboardCopyReply.self)
        return Copied(truncatedTo: reply.truncatedTo, decision: reply.decision)
    }

    /// Pastes; throws `CordonError.denied` when the policy refuses and `.pasteboardEmpty` when empty.
    public func paste() async throws -> Pasted {
        let reply = try await connection.call(.paste, NoParameters(), returning: PasteboardPasteReply.self)
        return Pasted(
            content: reply.content, mimeType: reply.mimeType, source: reply.source, truncatedTo: reply.truncatedTo,
            decision: reply.decision)
    }

    /// Empties the pasteboard.
    public func clear() async throws {
        _ = try await connection.call(.clear, NoParameters(), returning: NoParameters.self)
    }
}

extension CordonApp {
    /// The managed pasteboard, as this app.
    public var pasteboard: CordonPasteboard { CordonPasteboard(connection: control) }
}

extension CordonClient {
    /// The managed pasteboard, as an unregistered (unmanaged) client.
    public var pasteboard: CordonPasteboard { CordonPasteboard(connection: connection) }
}
