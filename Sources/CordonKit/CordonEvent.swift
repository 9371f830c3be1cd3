import CordonProtocol
import Foundation

extension CordonEvent {
    /// The event CordonKit reports when the agent is gone: the key must be treated as revoked.
    public static func agentUnavailable(lastSeq: Int) -> CordonEvent {
        CordonEvent(
            seq: lastSeq, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .agentUnavailable,
            time: Date().timeIntervalSince1970, state: .lockedNoKey)
    }
}

/// The typed event stream of one subscription connection.
struct EventStream: Sendable {
    let connection: VarlinkClientConnection
    let events: AsyncThrowingStream<CordonEvent, any Error>

    static func open(socketPath: String, token: String?) async throws -> EventStream {
        let connection = try await VarlinkClientConnection.connect(path: socketPath)
        let events = try connection.typedStream(
            .subscribe, SubscribeParameters(token: token), as: SubscribeReply.self
        ) { $0.event }
        return EventStream(connection: connection, events: events)
    }
}
