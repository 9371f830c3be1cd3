import CordonProtocol
import Foundation

extension VarlinkClientConnection {
    /// Streams `method` (called with `more`) as typed elements: each reply is decoded as `Reply`
    /// and mapped with `element`. The stream ends with `CordonClientError.connectionClosed` when
    /// the agent goes away, or with the agent's error; ending or cancelling it closes this connection.
    func typedStream<P: Encodable & Sendable, Reply: Decodable & Sendable, Element: Sendable>(
        _ method: Method, _ parameters: P, as reply: Reply.Type,
        element: @escaping @Sendable (Reply) -> Element
    ) throws -> AsyncThrowingStream<Element, any Error> {
        let raw = try stream(method, parameters)
        return AsyncThrowingStream<Element, any Error> { continuation in
            let task = Task {
                do {
                    for try await message in raw {
                        continuation.yield(element(try self.decode(Reply.self, from: message)))
                    }
                    continuation.finish(throwing: CordonClientError.connectionClosed)
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                task.cancel()
                Task { await self.close() }
            }
        }
    }
}
