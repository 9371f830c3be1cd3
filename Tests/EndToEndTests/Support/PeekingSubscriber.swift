import Foundation
import Glibc

/// A subscriber that never reads on its own: the test peeks at what the agent has already
/// written into its socket, to check what was sent before something else happened.
final class PeekingSubscriber {
    let fd: Int32

    /// Connects to `path` and subscribes (as an observer).
    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let subscribe = Array(#"{"method":"io.cordon.App.Subscribe","parameters":{},"more":true}"#.utf8) + [0]
        _ = subscribe.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    deinit { close(fd) }

    /// Everything in the socket's receive queue now, without waiting or consuming it.
    func peek() -> String {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        return count > 0 ? String(decoding: buffer[0..<count].map { $0 == 0 ? 10 : $0 }, as: UTF8.self) : ""
    }
}
