import CordonProtocol

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
