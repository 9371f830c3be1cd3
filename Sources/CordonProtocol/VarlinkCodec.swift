import Foundation

/// Encodes and decodes varlink messages (JSON objects; framing is done by the transport).
public struct VarlinkCodec: Sendable {
    public init() {}

    /// Decodes the call envelope of one message.
    public func decodeHeader(_ message: Data) throws(VarlinkError) -> VarlinkCallHeader {
        do {
            return try JSONDecoder().decode(VarlinkCallHeader.self, from: message)
        } catch let error as DecodingError {
            if case .keyNotFound = error {
                throw .invalidMessage(reason: "the call has no \"method\" member")
            }
            if case .dataCorrupted = error {
                throw .invalidMessage(reason: "the message is not a JSON object")
            }
            throw .invalidMessage(reason: "the call envelope is malformed at \(Self.path(of: error))")
        } catch {
            throw .invalidMessage(reason: "the message is not valid JSON")
        }
    }

    /// Decodes the parameters of a call (or reply); absent parameters decode from `{}`.
    public func decodeParameters<P: Decodable>(_ type: P.Type, from message: Data) throws(VarlinkError) -> P {
        do {
            let envelope = try JSONDecoder().decode(ParametersEnvelope<P>.self, from: message)
            if let parameters = envelope.parameters { return parameters }
            return try JSONDecoder().decode(P.self, from: Data("{}".utf8))
        } catch let error as DecodingError {
            throw .invalidParameter(Self.parameterName(of: error))
        } catch {
            throw .invalidParameter("parameters")
        }
    }

    /// Encodes any encodable message as JSON bytes (without the terminating NUL).
    public func encode<M: Encodable>(_ message: M) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(message)
    }

    /// Encodes an error reply.
    public func encodeError(_ error: VarlinkError) -> Data {
        let reply = VarlinkReply<[String: JSONValue]>(parameters: error.parameters, error: error.name)
        // Encoding a dictionary of JSON values cannot fail.
        return (try? encode(reply)) ?? Data("{\"error\":\"\(error.name)\"}".utf8)
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

    static func path(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return "/" + context.codingPath.map(\.stringValue).joined(separator: "/")
        @unknown default: return "/"
        }
    }
}
