import CordonProtocol

/// What an `io.cordon.App.Check` call asks, as the decision reads it: the action, the target, and
/// the two context entries a decision uses. Read straight from the parsed call, the context's
/// entries are found by a scan rather than put in a dictionary on every call (docs/PERFORMANCE.md,
/// "Round trips"). It accepts exactly what `CheckParameters` accepts; for anything else the agent
/// decodes `CheckParameters`, which names the offending parameter.
struct CheckCall: Equatable {
    let action: String
    let target: String?
    /// `context.contentType`.
    let contentType: String?
    /// `context.length`, as sent.
    let length: String?

    /// The call in `node` (its parameters object), or nil when `CheckParameters` would not read it
    /// (`CheckParameters.read`: a missing action, or a member or context value of the wrong kind).
    init?(readingJSON node: JSONNode) {
        var contentType: String?
        var length: String?
        let read = CheckParameters.read(node) { key, value in
            switch key {
            case "contentType": contentType = value
            case "length": length = value
            default: break
            }
        }
        guard let read else { return nil }
        (action, target, self.contentType, self.length) = (read.action, read.target, contentType, length)
    }

    /// The call `parameters` decoded.
    init(_ parameters: CheckParameters) {
        action = parameters.action
        target = parameters.target
        contentType = parameters.context?["contentType"]
        length = parameters.context?["length"]
    }
}
