import CordonProtocol

extension CordonApp {
    /// Asks the policy whether this app may do `action`; honour the answer before acting.
    ///
    /// - Parameters:
    ///   - action: what the app is about to do.
    ///   - target: the other app's id (`documentSend`, `documentReceive`, `pasteboardPaste`), or
    ///     the destination path (`documentSave`).
    ///   - contentType: a MIME type or a file name / extension, for documents.
    ///   - length: the content's length in characters, for the pasteboard.
    ///
    /// ```swift
    /// let decision = try await app.check(.pasteboardCopy, length: text.count)
    /// guard decision.allowed else { return showBlocked(decision.reason) }
    /// pasteboard.copy(decision.truncateTo.map { String(text.prefix($0)) } ?? text)
    /// ```
    /// When allowed with `truncateTo`, the app must cut the content to that many characters.
    /// Throws `CordonError.unknownAction` for `appRegister` and for actions the agent does not know.
    public func check(
        _ action: PolicyAction, target: String? = nil, contentType: String? = nil, length: Int? = nil
    ) async throws -> CordonDecision {
        let parameters = CheckParameters(
            action: action.rawValue, target: target,
            context: PolicyContext.wire(contentType: contentType, length: length))
        return try await control.call(.check, parameters, returning: CheckReply.self).decision
    }
}
