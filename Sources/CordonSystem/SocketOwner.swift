import CCordonLinux
import Foundation

/// Who owns the other end of a loopback TCP connection: the uid the kernel's socket diagnostics
/// report for the connecting socket (`NETLINK_SOCK_DIAG`, the exact 4-tuple; docs/components/pinned-channel.md,
/// "Channel and tunnel"). A loopback port carries no credentials of its own; this is how a server
/// on one learns which user connected.
public enum SocketOwner {
    /// Why the owner could not be read.
    public struct LookupError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The errno: `ENOENT` when no process holds the connecting socket any more.
        public let code: Int32

        /// The failure for `code` (an errno).
        public init(code: Int32) {
            self.code = code
        }

        public var description: String {
            code == ENOENT ? "the connecting socket is gone" : "socket diagnostics: \(String(cString: strerror(code)))"
        }
    }

    /// The uid owning the socket that connected from `peer` to `local`, as seen on the accepting
    /// side: `peer` is the accepted socket's peer address, `local` its own. IPv4 only.
    public static func uid(connectingFrom peer: sockaddr_in, to local: sockaddr_in) throws(LookupError) -> uid_t {
        // Network byte order, as in the sockaddr: the 4 bytes of each address as they are.
        let peerBytes = withUnsafeBytes(of: peer.sin_addr) { Array($0) }
        let localBytes = withUnsafeBytes(of: local.sin_addr) { Array($0) }
        var owner: uid_t = 0
        let result = cordon_tcp_socket_owner(
            AF_INET, peerBytes, UInt16(bigEndian: peer.sin_port), localBytes, UInt16(bigEndian: local.sin_port),
            &owner)
        guard result == 0 else { throw LookupError(code: -result) }
        return owner
    }
}
