import CCordonLinux
import Foundation

/// Sending an open descriptor over a connected Unix stream socket (SCM_RIGHTS), for the agent's
/// `io.cordon.App.OpenDocument` reply (docs/ARCHITECTURE.md, "Components").
///
/// SwiftNIO does not expose a stream channel's descriptor nor send ancillary data on it, so the
/// socket is found by its kernel cookie (`SO_COOKIE`, which the channel's socket options give)
/// among the process's descriptors, and the reply written with `sendmsg` on the event loop.
public enum DescriptorPassing {
    /// `SO_COOKIE`: a number the kernel gives each socket, unique for the boot.
    public static let cookieOption: CInt = 57

    /// The process's descriptor for the socket whose cookie is `cookie`; not to be closed.
    public static func socket(withCookie cookie: UInt64) throws(SystemError) -> CInt {
        let result = cordon_socket_with_cookie(cookie)
        guard result >= 0 else { throw SystemError(operation: "find the socket by SO_COOKIE", errno: -result) }
        return result
    }

    /// Sends `bytes` on `socket` with `descriptor` attached, without blocking; returns how many
    /// bytes went out (the descriptor travels with the first).
    public static func send(_ bytes: [UInt8], on socket: CInt, attaching descriptor: CInt) throws(SystemError)
        -> Int
    {
        let sent = bytes.withUnsafeBytes { cordon_send_with_descriptor(socket, $0.baseAddress, $0.count, descriptor) }
        guard sent > 0 else {
            throw SystemError(operation: "sendmsg(SCM_RIGHTS)", errno: sent == 0 ? EAGAIN : -CInt(sent))
        }
        return sent
    }
}
