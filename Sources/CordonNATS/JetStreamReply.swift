import CNATS
import Foundation

/// A JetStream API reply (`{"stream":…,"seq":…}`, or `{"error":{"code":…,"err_code":…,
/// "description":…}}`), read the way nats.c reads a publish acknowledgement.
struct JetStreamReply: Decodable {
    struct APIError: Decodable {
        var code: Int?
        var errorCode: Int32?
        var description: String?

        enum CodingKeys: String, CodingKey {
            case code
            case errorCode = "err_code"
            case description
        }
    }

    var seq: UInt64?
    var error: APIError?

    /// The sequence the stream stored a message under, from its acknowledgement; an error the
    /// server answered with (its JetStream code kept), or a reply that is no acknowledgement.
    static func sequence(of data: [UInt8], operation: String) throws(NATSError) -> UInt64 {
        let reply: JetStreamReply
        do {
            reply = try JSONDecoder().decode(JetStreamReply.self, from: Data(data))
        } catch {
            throw NATSError(operation, NATS_ERR, detail: "the acknowledgement is not JetStream's JSON: \(error)")
        }
        if let error = reply.error {
            throw NATSError(
                operation, NATS_ERR,
                detail: error.description ?? "the stream refused it (\(error.code.map(String.init) ?? "no code"))",
                jetStream: error.errorCode ?? 0)
        }
        guard let sequence = reply.seq else {
            throw NATSError(operation, NATS_ERR, detail: "the acknowledgement has no sequence")
        }
        return sequence
    }
}
