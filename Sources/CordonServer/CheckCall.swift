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
    /// the same way: a missing action, or a member or context value of the wrong kind.
    init?(readingJSON node: JSONNode) {
        guard case .object(let members) = node else { return nil }
        var action: String?
        var target: String?
        var contentType: String?
        var length: String?
        for member in members {
            switch member.key {
            case "action":
                guard case .string(let value) = member.value else { return nil }
                action = value
            case "target":
                switch member.value {
                case .null: target = nil
                case .string(let value): target = value
                default: return nil
                }
            case "context":
                switch member.value {
                case .null: (contentType, length) = (nil, nil)
                case .object(let entries):
                    // Every value must be a string, as in `CheckParameters.context`; the parser has
                    // already refused a repeated name.
                    for entry in entries {
                        guard case .string(let value) = entry.value else { return nil }
                        switch entry.key {
                        case "contentType": contentType = value
                        case "length": length = value
                        default: continue
                        }
                    }
                default: return nil
                }
            default: continue
            }
        }
        guard let action else { return nil }
        (self.action, self.target, self.contentType, self.length) = (action, target, contentType, length)
    }

    /// The call `parameters` decoded.
    init(_ parameters: CheckParameters) {
        action = parameters.action
        target = parameters.target
        contentType = parameters.context?["contentType"]
        length = parameters.context?["length"]
    }
}
