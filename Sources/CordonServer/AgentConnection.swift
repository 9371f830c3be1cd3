import CordonCore
import CordonSystem
import NIOCore

/// One identified client connection.
final class AgentConnection: Sendable {
    let id: ConnectionID
    let identity: PeerIdentity
    /// Keeps the peer's pidfd open for the connection's lifetime.
    let pidfd: Pidfd?
    let channel: any Channel

    init(id: ConnectionID, identity: PeerIdentity, pidfd: Pidfd?, channel: any Channel) {
        self.id = id
        self.identity = identity
        self.pidfd = pidfd
        self.channel = channel
    }
}

/// A connection streaming events, with a bounded queue for when its socket is full.
final class Subscriber {
    let connection: AgentConnection
    var queue: BoundedQueue<ByteBuffer>

    init(connection: AgentConnection, capacity: Int) {
        self.connection = connection
        queue = BoundedQueue(capacity: capacity)
    }
}
