import CordonLifecycle
import CordonProtocol
import CordonSystem
import Foundation
import NIOCore

/// What a connection handler needs of the agent: admitting an identified peer, serving its
/// calls, whether it registered an app, hearing that its socket has room again, and forgetting
/// it. `Agent` is the one in production; the handler's tests use a scripted stand-in.
protocol ConnectionAgent: AnyObject {
    /// The limits every connection is held to.
    var limits: ConnectionLimits { get }
    /// Where each call's round trip is recorded (none: not measured).
    var callMetrics: AgentMetrics? { get }
    /// Admits a new identified connection, or returns why not.
    func connectionOpened(context: ChannelHandlerContext, identity: PeerIdentity, pidfd: Pidfd?) -> Result<
        AgentConnection, VarlinkError
    >
    /// Whether connection `id` registered an app (its lifetime is the app's; it is never idle).
    func isRegistered(_ id: ConnectionID) -> Bool
    /// Serves one call from `connection`.
    func dispatch(_ message: VarlinkCallMessage, connection: AgentConnection) -> CallOutcome
    /// The socket of connection `id` has room again.
    func connectionWritable(_ id: ConnectionID)
    /// Connection `id` is ending with a final frame the handler writes through NIO: nothing may
    /// be written past NIO on it from now on.
    func connectionFailing(_ id: ConnectionID)
    /// Forgets everything a closed connection held.
    func connectionClosed(_ id: ConnectionID)
    /// Process `sender` (0: one the agent cannot see) wrote on connection `id`, which another
    /// process opened: the handler refuses it and closes the connection.
    func foreignSender(_ sender: Int32, on id: ConnectionID)
}

extension ConnectionAgent {
    /// Not measured, unless the agent says otherwise.
    var callMetrics: AgentMetrics? { nil }
}

/// How a handler learns who is on the other end of its channel.
typealias PeerIdentification = (ChannelHandlerContext) -> EventLoopFuture<(PeerIdentity, Pidfd?)>

enum PeerCredentialReader {
    /// The kernel's word: `SO_PEERCRED`, and `SO_PEERPIDFD` where the kernel has it (else a pidfd
    /// opened by pid, the start time checked: `PeerIdentity.resolve`).
    static func identify(_ context: ChannelHandlerContext) -> EventLoopFuture<(PeerIdentity, Pidfd?)> {
        guard let provider = context.channel as? any SocketOptionProvider else {
            return context.eventLoop.makeFailedFuture(VarlinkError.permissionDenied)
        }
        // On the channel's own loop these futures are already complete.
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        let pidfd: EventLoopFuture<CInt> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(77))  // SO_PEERPIDFD
        return credentials.and(pidfd.recover { _ in -1 }).map { credentials, pidfdNumber in
            PeerIdentity.resolve(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, pidfd: pidfdNumber)
        }
    }
}

extension Agent: ConnectionAgent {
    var limits: ConnectionLimits { configuration.limits }

    func connectionWritable(_ id: ConnectionID) { eventBus.writable(id) }

    func connectionFailing(_ id: ConnectionID) { eventBus.connectionFailing(id) }
}
