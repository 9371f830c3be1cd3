import CordonProtocol

/// Errors of the client side: the agent could not be reached, or spoke unexpectedly.
/// Errors the agent returns arrive as `CordonError`.
public enum CordonClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing answered at the socket.
    case agentUnavailable(socket: String, reason: String)
    /// The connection closed before the reply.
    case connectionClosed
    /// A varlink error Cordon does not define (e.g. `org.varlink.service.MethodNotFound`).
    case remote(VarlinkError)
    /// The agent's reply did not have the expected shape.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .agentUnavailable(let socket, let reason): return "cannot reach cordond at \(socket): \(reason)"
        case .connectionClosed: return "the connection to cordond closed"
        case .remote(let error): return "cordond answered \(error.name)"
        case .protocolViolation(let detail): return "unexpected answer from cordond: \(detail)"
        }
    }
}
