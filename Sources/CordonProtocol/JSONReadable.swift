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
        var context: [String: String] = [:]
        guard let read = Self.read(node, context: { context[$0] = $1 }) else { return nil }
        self.init(action: read.action, target: read.target, context: read.hasContext ? context : nil)
    }

    /// Reads `Check` parameters as ``init(readingJSON:)`` accepts them, handing each context entry
    /// to `entry` instead of building the dictionary (the agent needs two of them on every call):
    /// the action, the target and whether a context object was given; nil when `node` is not
    /// parameters ``init(readingJSON:)`` accepts.
    public static func read(_ node: JSONNode, context entry: (_ key: String, _ value: String) -> Void)
        -> (action: String, target: String?, hasContext: Bool)?
    {
        guard case .object(let members) = node else { return nil }
        var action: String?
        var target: String?
        var hasContext = false
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
                case .null: hasContext = false
                case .object(let entries):
                    // The parser has already refused a repeated name, here and above.
                    for member in entries {
                        guard case .string(let value) = member.value else { return nil }
                        entry(member.key, value)
                    }
                    hasContext = true
                default: return nil
                }
            default: continue
            }
        }
        guard let action else { return nil }
        return (action, target, hasContext)
    }
}

extension JSONNode {
    /// Reads an object whose members `keys` names are each a string or null (nil): hands each of
    /// them to `assign`; other members are skipped, as `Decodable` skips them. False when the node
    /// is not an object or one of `keys` holds anything else (the `Decodable` path then names it).
    func readStringMembers(_ keys: Set<String>, _ assign: (_ key: String, _ value: String?) -> Void) -> Bool {
        guard case .object(let members) = self else { return false }
        for member in members where keys.contains(member.key) {
            switch member.value {
            case .null: assign(member.key, nil)
            case .string(let text): assign(member.key, text)
            default: return false
            }
        }
        return true
    }
}

extension StorageRecordParameters: JSONReadable {
    private static let keys: Set = ["namespace", "name", "appId", "passcode"]

    public init?(readingJSON node: JSONNode) {
        var (namespace, name, appId, passcode): (String?, String?, String?, String?)
        let read = node.readStringMembers(Self.keys) { key, value in
            switch key {
            case "namespace": namespace = value
            case "name": name = value
            case "appId": appId = value
            default: passcode = value
            }
        }
        guard read, let name else { return nil }
        self.init(namespace: namespace, name: name, appId: appId, passcode: passcode)
    }
}

extension TokenCodeParameters: JSONReadable {
    private static let keys: Set = ["serial", "pin", "passcode"]

    public init?(readingJSON node: JSONNode) {
        var (serial, pin, passcode): (String?, String?, String?)
        let read = node.readStringMembers(Self.keys) { key, value in
            switch key {
            case "serial": serial = value
            case "pin": pin = value
            default: passcode = value
            }
        }
        guard read, let serial else { return nil }
        self.init(serial: serial, pin: pin, passcode: passcode)
    }
}

extension IdentityTokenParameters: JSONReadable {
    private static let keys: Set = ["domain"]

    public init?(readingJSON node: JSONNode) {
        var domain: String?
        guard node.readStringMembers(Self.keys, { _, value in domain = value }), let domain else { return nil }
        self.init(domain: domain)
    }
}
