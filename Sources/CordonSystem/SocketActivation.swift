import CSystemd
import Foundation

/// A listening socket passed by the service manager (socket activation).
public struct ActivatedSocket: Sendable, Equatable {
    /// The file descriptor (3 for the first socket systemd passes).
    public let descriptor: CInt
    /// The path the socket is bound to, when it is a path-bound Unix socket.
    public let path: String?
}

/// Socket activation: the sockets systemd passes with `LISTEN_FDS` / `LISTEN_PID` (`sd_listen_fds`).
public enum SocketActivation {
    /// The first descriptor `sd_listen_fds` hands out (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: CInt = 3

    /// The listening Unix stream socket passed to this process, or nil when not socket-activated.
    ///
    /// Unsets `LISTEN_FDS`, `LISTEN_PID` and `LISTEN_FDNAMES` so no child inherits them, and
    /// marks the descriptors close-on-exec. Throws when descriptors were passed but none is a
    /// listening Unix stream socket: serving something else would be wrong.
    public static func takeListeningSocket() throws -> ActivatedSocket? {
        let count = sd_listen_fds(1)
        guard count != 0 else { return nil }
        guard count > 0 else { throw SystemError(operation: "sd_listen_fds", errno: -count) }
        var found: ActivatedSocket?
        for descriptor in firstDescriptor..<(firstDescriptor + count) {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            guard found == nil, sd_is_socket_unix(descriptor, CInt(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
                continue
            }
            found = ActivatedSocket(descriptor: descriptor, path: boundPath(of: descriptor))
        }
        guard let found else { throw SocketActivationError.noUnixStreamListener(count: Int(count)) }
        return found
    }

    /// The filesystem path a Unix socket is bound to (`getsockname`), nil for abstract or unnamed ones.
    public static func boundPath(of descriptor: CInt) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        let offset = MemoryLayout.offset(of: \sockaddr_un.sun_path) ?? 2
        let pathLength = Int(length) - offset
        guard pathLength > 1 else { return nil }
        return withUnsafeBytes(of: &address.sun_path) { raw in
            let bytes = raw.prefix(pathLength)
            guard bytes.first != 0 else { return nil }  // Abstract namespace.
            let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
            return String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
        }
    }
}

/// Why socket activation cannot be used.
public enum SocketActivationError: Error, Sendable, Equatable, CustomStringConvertible {
    case noUnixStreamListener(count: Int)

    public var description: String {
        switch self {
        case .noUnixStreamListener(let count):
            return "systemd passed \(count) descriptor(s) but none is a listening Unix stream socket"
        }
    }
}
