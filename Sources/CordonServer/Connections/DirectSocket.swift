import CCordonLinux
import CordonSystem
import Glibc
import Logging
import NIOCore

/// A subscriber's socket descriptor, confirmed by the kernel, so a broadcast frame can go out
/// with one `send` instead of NIO's per-channel write path (docs/ARCHITECTURE.md, "An event,
/// from the lifecycle machine to every subscriber").
///
/// NIO does not expose an accepted channel's descriptor. Its number is read from NIO's own
/// storage by reflection (`socket.descriptor` of the channel) and used only when the kernel
/// agrees: the socket cookie (`SO_COOKIE`, unique for the boot) that NIO reads through its
/// descriptor must equal the one read through the number reflection found. Another NIO layout, a
/// channel that is not a socket or a mismatch leaves the subscriber on NIO's path. This keeps the
/// accept path NIO's (socket activation, the backlog, `AcceptErrorLogger`), where accepting
/// connections ourselves and handing them to NIO would rebuild it; the lookup runs once per
/// subscriber and a failed one costs only the fast path. (`DescriptorPassing.socket(withCookie:)`,
/// which document hand-off uses, finds the same number by walking the process's descriptors:
/// fine once per hand-off, too dear once per subscriber among a thousand.)
///
/// The number stays right for as long as the channel is active: nothing but NIO closes the
/// descriptor, and NIO closes it and marks the channel inactive in one synchronous step on the
/// event loop (`close0`), so on the loop an active channel's descriptor is still this socket
/// and has not been reused. Callers check `isActive` right before each `send`.
struct DirectSocket {
    /// The socket's descriptor; NIO owns it (never closed here).
    let descriptor: CInt

    /// What one `send` did.
    enum Outcome: Equatable {
        /// The whole frame went out.
        case wrote
        /// Only this many bytes went out (fewer than the frame, possibly none).
        case partial(Int)
        /// The socket has no room (`EAGAIN`): nothing went out.
        case wouldBlock
        /// Another error (`EPIPE`, `ECONNRESET`, …, the errno): nothing went out.
        case failed(CInt)
    }

    /// Where a candidate descriptor number comes from (reflection in production).
    typealias Candidate = (any Channel) -> CInt?

    /// The confirmed descriptor of `channel`'s socket, or nil (logged at debug) when it cannot be
    /// found or the kernel does not confirm it. On the channel's event loop only.
    static func locate(
        _ channel: any Channel, logger: Logger, candidate: Candidate = reflectedDescriptor(of:)
    ) -> DirectSocket? {
        channel.eventLoop.preconditionInEventLoop()
        guard channel.isActive else { return nil }
        guard let number = candidate(channel), number >= 0 else {
            logger.debug("subscriber stays on NIO's write path: no socket descriptor found")
            return nil
        }
        guard let expected = cookieThroughNIO(channel) else {
            logger.debug("subscriber stays on NIO's write path: NIO gave no socket cookie")
            return nil
        }
        var actual: UInt64 = 0
        let result = cordon_socket_cookie(number, &actual)
        guard result == 0, actual == expected else {
            logger.debug(
                "subscriber stays on NIO's write path: the descriptor is not the channel's socket",
                metadata: ["fd": "\(number)", "errno": "\(-result)"])
            return nil
        }
        return DirectSocket(descriptor: number)
    }

    /// The descriptor number NIO keeps for `channel`'s socket (`BaseSocketChannel.socket`, then
    /// `BaseSocket.descriptor`), found by reflection; nil when NIO's layout differs.
    static func reflectedDescriptor(of channel: any Channel) -> CInt? {
        guard let socket = storedProperty("socket", of: channel) else { return nil }
        return storedProperty("descriptor", of: socket) as? CInt
    }

    /// The socket's cookie as NIO reads it through its own descriptor; on the channel's loop the
    /// future is already complete.
    static func cookieThroughNIO(_ channel: any Channel) -> UInt64? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        var cookie: UInt64?
        let future: EventLoopFuture<UInt64> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(DescriptorPassing.cookieOption))
        future.assumeIsolated().whenSuccess { cookie = $0 }
        return cookie
    }

    /// Writes `frame`'s readable bytes with one `send` that neither blocks nor raises SIGPIPE.
    /// On the event loop, with the channel checked active.
    func send(_ frame: ByteBuffer) -> Outcome {
        let length = frame.readableBytes
        let result = frame.withUnsafeReadableBytes { cordon_send_nonblocking(descriptor, $0.baseAddress, $0.count) }
        if result == length { return .wrote }
        if result >= 0 { return .partial(result) }
        let code = CInt(-result)
        return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
    }

    /// The stored property `label` of `subject` or of one of its superclasses.
    private static func storedProperty(_ label: String, of subject: Any) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == label }) { return child.value }
            mirror = current.superclassMirror
        }
        return nil
    }
}
