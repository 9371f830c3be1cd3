/// An action the policy decides, by its name on the wire.
///
/// ```swift
/// let decision = try await app.check(.pasteboardCopy, length: text.count)
/// ```
public enum PolicyAction: String, Sendable, Hashable, CaseIterable, Codable {
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
