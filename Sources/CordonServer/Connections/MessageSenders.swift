import CCordonSenders
import CordonSystem
import Logging
import NIOCore

/// Who wrote what a connection's handler reads: the process the kernel names for each read, so a
/// message speaks for the process that wrote it, not for whoever holds the socket
/// (docs/ARCHITECTURE.md, "Who wrote a message").
///
/// `KernelSenders` in production; the handler's tests script one.
protocol MessageSenders: AnyObject {
    /// The process ID the kernel gave for the writer of the bytes of the last read, or nil when
    /// there is none (nothing attributed; a writer outside the agent's PID namespace).
    func lastWriter() -> Int32?
    /// Stops attributing: the connection is closing.
    func stop()
    /// The connection's socket, confirmed by the kernel, for replies written with one `send`;
    /// nil keeps them on NIO's write path.
    var socket: DirectSocket? { get }
}

/// How a handler starts attributing its channel's reads; nil when it cannot.
typealias SenderAttachment = (ChannelHandlerContext) -> (any MessageSenders)?

/// The kernel's record of each read's writer (`SCM_CREDENTIALS`), kept by the agent's `read`
/// (`CCordonSenders`) for the socket NIO reads. One read never holds the bytes of two writers once
/// `SO_PASSCRED` is set, which `attach` does before NIO's first read.
final class KernelSenders: MessageSenders {
    private let descriptor: CInt
    let socket: DirectSocket?
    /// The socket's `SO_COOKIE`: the mark is this socket's, not its number's.
    private let cookie: UInt64
    private var attached = true

    private init(descriptor: CInt, cookie: UInt64) {
        self.descriptor = descriptor
        self.cookie = cookie
        socket = DirectSocket(descriptor: descriptor)
    }

    private static let logger = Logger(label: "io.cordon.agent.senders")

    /// Starts attributing the reads of `context`'s socket; on the channel's event loop, before
    /// its first read. Nil (logged) when the socket's descriptor cannot be confirmed or marked.
    static func attach(_ context: ChannelHandlerContext) -> (any MessageSenders)? {
        let channel = context.channel
        // NIO's storage first (no system call), else a walk of the process's descriptors.
        let socket =
            DirectSocket.locate(channel, logger: logger)
            ?? DirectSocket.locate(channel, logger: logger) { channel in
                guard let cookie = DirectSocket.cookieThroughNIO(channel) else { return nil }
                return try? DescriptorPassing.socket(withCookie: cookie)
            }
        guard let socket, let cookie = DirectSocket.cookieThroughNIO(channel) else {
            logger.warning("cannot attribute a connection's messages: its socket was not found")
            return nil
        }
        let result = cordon_senders_attribute(socket.descriptor, cookie)
        guard result == 0 else {
            logger.warning(
                "cannot attribute a connection's messages",
                metadata: [
                    "fd": "\(socket.descriptor)", "error": "\(SystemError(operation: "SO_PASSCRED", errno: -result))",
                ])
            return nil
        }
        return KernelSenders(descriptor: socket.descriptor, cookie: cookie)
    }

    func lastWriter() -> Int32? {
        guard attached else { return nil }
        let writer = cordon_senders_last(descriptor, cookie)
        return writer > 0 ? writer : nil
    }

    func stop() {
        guard attached else { return }
        attached = false
        cordon_senders_forget(descriptor, cookie)
    }
}
