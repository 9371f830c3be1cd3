import Foundation

/// Encodes and decodes varlink messages (JSON objects; framing is done by the transport).
///
/// JSON goes through the project's own `VarlinkJSONDecoder` / `VarlinkJSONEncoder`: a call is
/// parsed once, its envelope read from the parsed form and its parameters decoded from there.
/// (Foundation's coders cost more than a whole socket round trip; see docs/PERFORMANCE.md.)
public struct VarlinkCodec: Sendable {
    public init() {}

    /// Parses one call: its envelope, and its parameters left parsed for `decodeParameters`.
    public func decodeCall(_ message: some Collection<UInt8>) throws(VarlinkError) -> VarlinkCallMessage {
        let node: JSONNode
        do {
            node = try JSONNodeParser.parse(message)
        } catch {
            throw .invalidMessage(reason: "the message is not a JSON object (\(error))")
        }
        guard case .object = node else {
            throw .invalidMessage(reason: "the message is not a JSON object but \(node.kindName)")
        }
        guard let method = node["method"] else { throw .invalidMessage(reason: "the call has no \"method\" member") }
        guard case .string(let name) = method else { throw .invalidMessage(reason: Self.malformed("/method")) }
        let header = VarlinkCallHeader(
            method: name, more: try Self.flag(node, "more"), oneway: try Self.flag(node, "oneway"),
            upgrade: try Self.flag(node, "upgrade"))
        return VarlinkCallMessage(header: header, parameters: node["parameters"])
    }

    private static func flag(_ node: JSONNode, _ name: String) throws(VarlinkError) -> Bool {
        switch node[name] {
        case nil, .null?: return false
        case .bool(let value)?: return value
        default: throw .invalidMessage(reason: malformed("/\(name)"))
        }
    }

    private static func malformed(_ pointer: String) -> String { "the call envelope is malformed at \(pointer)" }

    /// Decodes the call envelope of one message.
    public func decodeHeader(_ message: some Collection<UInt8>) throws(VarlinkError) -> VarlinkCallHeader {
        try decodeCall(message).header
    }

    /// Decodes the parameters of a parsed call.
    public func decodeParameters<P: Decodable>(_ type: P.Type, from call: VarlinkCallMessage) throws(VarlinkError)
        -> P
    {
        try decodeParameters(type, fromMember: call.parameters)
    }

    /// Decodes a message's parsed `parameters` member; absent or null parameters decode from `{}`.
    public func decodeParameters<P: Decodable>(_ type: P.Type, fromMember parameters: JSONNode?)
        throws(VarlinkError) -> P
    {
        let parameters = parameters.flatMap { $0 == .null ? nil : $0 } ?? .object([])
        do {
            return try VarlinkJSONDecoder().decode(P.self, from: parameters)
        } catch let error as DecodingError {
            throw .invalidParameter(Self.parameterName(of: error))
        } catch {
            throw .invalidParameter("parameters")
        }
    }

    /// Decodes the parameters of a call (or reply) message; absent parameters decode from `{}`.
    public func decodeParameters<P: Decodable>(_ type: P.Type, from message: some Collection<UInt8>)
        throws(VarlinkError) -> P
    {
        guard let node = try? JSONNodeParser.parse(message) else { throw .invalidParameter("parameters") }
        return try decodeParameters(type, fromMember: node["parameters"])
    }

    /// Encodes any encodable message as JSON bytes (without the terminating NUL).
    public func encode<M: Encodable>(_ message: M) throws -> Data {
        Data(try encodeBytes(message))
    }

    /// Encodes any encodable message as JSON bytes (without the terminating NUL).
    public func encodeBytes<M: Encodable>(_ message: M) throws -> [UInt8] {
        try VarlinkJSONEncoder().encode(message)
    }

    /// Encodes an error reply.
    public func encodeError(_ error: VarlinkError) -> Data {
        Data(encodeErrorBytes(error))
    }

    /// Encodes an error reply.
    public func encodeErrorBytes(_ error: VarlinkError) -> [UInt8] {
        let reply = VarlinkReply<[String: JSONValue]>(parameters: error.parameters, error: error.name)
        // Encoding a dictionary of JSON values fails only for a non-finite number.
        return (try? encodeBytes(reply)) ?? Array("{\"error\":\"\(error.name)\"}".utf8)
    }

    /// The first parameter a decoding error names, for `InvalidParameter`.
    static func parameterName(of error: DecodingError) -> String {
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        @unknown default: path = []
        }
        let names = path.map(\.stringValue).filter { $0 != "parameters" }
        return names.first ?? "parameters"
    }
}

/// One parsed call: its envelope and its still undecoded parameters.
public struct VarlinkCallMessage: Sendable {
    public var header: VarlinkCallHeader
    /// The `parameters` member as parsed; nil when absent.
    public var parameters: JSONNode?

    public init(header: VarlinkCallHeader, parameters: JSONNode?) {
        self.header = header
        self.parameters = parameters
    }
}
