import CordonLifecycle
import CordonSystem
import NIOCore

/// One identified client connection. Lives on the agent's event loop (not `Sendable`).
final class AgentConnection {
    let id: ConnectionID
    let identity: PeerIdentity
    /// Keeps the peer's pidfd open for the connection's lifetime.
    let pidfd: Pidfd?
    let channel: any Channel
    /// The connection handler's context: events written here skip the pipeline's tail.
    let context: ChannelHandlerContext

    init(id: ConnectionID, identity: PeerIdentity, pidfd: Pidfd?, context: ChannelHandlerContext) {
        self.id = id
        self.identity = identity
        self.pidfd = pidfd
        self.channel = context.channel
        self.context = context
    }
}
