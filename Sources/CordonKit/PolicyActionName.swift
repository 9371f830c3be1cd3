import CordonProtocol

/// An action the policy decides, by its name on the wire.
///
/// ```swift
/// let decision = try await app.check(.pasteboardCopy, length: text.count)
/// ```
public enum PolicyActionName: String, Sendable, Hashable, CaseIterable, Codable {
    /// Copying from this app to the pasteboard.
    case pasteboardCopy = "pasteboard.copy"
    /// Pasting into this app (the target is the app the content came from).
    case pasteboardPaste = "pasteboard.paste"
    /// Sending a document to another app (the target).
    case documentSend = "document.send"
    /// Receiving a document from another app (the target).
    case documentReceive = "document.receive"
    /// Saving a copy of a document (the target is the destination path).
    case documentSave = "document.save"
    /// Registering an app with the agent: decided by `CordonApp.connect`, not by `check`; `explain`
    /// takes it with the executable's path as the target.
    case appRegister = "app.register"
}

/// A policy decision: allowed or not, why, what the caller must do, and which rules decided.
///
/// ```swift
/// let decision = try await app.check(.pasteboardCopy, length: text.count)
/// guard decision.allowed else { return showBlocked(decision.reason) }
/// let copied = decision.truncateTo.map { String(text.prefix($0)) } ?? text
/// ```
public struct CordonDecision: Sendable, Equatable, Codable {
    /// Whether the action may go ahead.
    public var allowed: Bool
    /// The action decided.
    public var action: PolicyActionName
    /// A sentence for the user and the audit log.
    public var reason: String
    /// An obligation when allowed: cut the content to this many characters.
    public var truncateTo: Int?
    /// The deciding rules, as `FILE#POINTER`.
    public var rules: [String]

    /// Creates a decision.
    public init(allowed: Bool, action: PolicyActionName, reason: String, truncateTo: Int? = nil, rules: [String]) {
        self.allowed = allowed
        self.action = action
        self.reason = reason
        self.truncateTo = truncateTo
        self.rules = rules
    }

    /// The typed form of a wire decision; throws `protocolViolation` for an action this SDK does not know.
    init(_ wire: WireDecision) throws(CordonClientError) {
        guard let action = PolicyActionName(rawValue: wire.action) else {
            throw .protocolViolation("unknown action \"\(wire.action)\" in a decision")
        }
        self.init(
            allowed: wire.allowed, action: action, reason: wire.reason, truncateTo: wire.truncateTo, rules: wire.rules)
    }
}

/// The `context` a `Check` or `Explain` call sends: `contentType` and `length`, as strings.
enum PolicyContext {
    /// The wire dictionary, or `nil` when there is nothing to send.
    static func wire(contentType: String?, length: Int?) -> [String: String]? {
        var context: [String: String] = [:]
        if let contentType { context["contentType"] = contentType }
        if let length { context["length"] = String(length) }
        return context.isEmpty ? nil : context
    }

    /// `context` as sent: `nil` when empty.
    static func wire(_ context: [String: String]) -> [String: String]? {
        context.isEmpty ? nil : context
    }
}
