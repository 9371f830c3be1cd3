/// A wire type that reads itself from a parsed call, for the calls the agent serves most often:
/// no `Decoder` containers or generic metadata lookups per call (docs/PERFORMANCE.md, "Round
/// trips"). It answers nil for anything it does not accept, and the `Decodable` path then
/// decodes the same node and names the offending parameter, so errors are exactly as before;
/// `JSONReadableTests` checks both agree.
public protocol JSONReadable: Decodable {
    /// The value `node` holds, or nil when it is not a well-formed one.
    init?(readingJSON node: JSONNode)
}

extension VarlinkCodec {
    /// Decodes the parameters of a parsed call whose type reads itself; absent or null
    /// parameters read from `{}`.
    public func decodeParameters<P: JSONReadable>(_ type: P.Type, from call: VarlinkCallMessage) throws(VarlinkError)
        -> P
    {
        let parameters = call.parameters.flatMap { $0 == .null ? nil : $0 } ?? .object([])
        if let value = P(readingJSON: parameters) { return value }
        return try decodeParameters(type, fromMember: parameters)
    }
}

extension CheckParameters: JSONReadable {
    public init?(readingJSON node: JSONNode) {
        guard case .object(let members) = node else { return nil }
        var action: String?
        var target: String?
        var context: [String: String]?
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
                case .null: context = nil
                case .object(let entries):
                    var values: [String: String] = [:]
                    values.reserveCapacity(entries.count)
                    for entry in entries {
                        guard case .string(let value) = entry.value else { return nil }
                        values[entry.key] = value
                    }
                    context = values
                default: return nil
                }
            default: continue
            }
        }
        guard let action else { return nil }
        self.init(action: action, target: target, context: context)
    }
}
