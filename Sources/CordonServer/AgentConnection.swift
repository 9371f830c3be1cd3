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

/// A connection streaming events, with a bounded queue for when its socket is full.
final class Subscriber {
    let connection: AgentConnection
    /// The connection's channel and handler context, held here so the broadcast loop reaches
    /// them in one step.
    let channel: any Channel
    let context: ChannelHandlerContext
    var queue: BoundedQueue<ByteBuffer>
    /// Its place in `SubscriberTable.values`.
    var index = 0

    init(connection: AgentConnection, capacity: Int) {
        self.connection = connection
        channel = connection.channel
        context = connection.context
        queue = BoundedQueue(capacity: capacity)
    }
}
