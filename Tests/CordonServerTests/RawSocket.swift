import CordonKit
import CordonProtocol
import Foundation
import Glibc

/// A minimal blocking Unix-socket client that can send any bytes and read NUL-terminated replies.
///
/// Reads and writes time out (`SO_RCVTIMEO` / `SO_SNDTIMEO`), so a broken test fails instead of hanging.
final class RawSocket {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `path`.
    init(path: String, timeoutSeconds: Int = 60) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError.system("socket", errno) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
        do {
            var address = try Self.address(path)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard result == 0 else { throw RawSocketError.system("connect", errno) }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        close(fd)
    }

    /// A `sockaddr_un` for `path`.
    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw RawSocketError.pathTooLong(path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Sends `bytes` as they are.
    func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw RawSocketError.system("send", errno)
            }
            offset += sent
        }
    }

    /// Sends `message` followed by the NUL terminator.
    func send(_ message: String) throws {
        try send(bytes: Array(message.utf8) + [0])
    }

    /// Reads the next NUL-terminated message (without the NUL), or nil once the agent closed
    /// the connection. A reset after the last message counts as closed: the kernel reports one
    /// instead of EOF when the agent closed with unread input.
    func readMessage() throws -> Data? {
        while true {
            if let nul = buffer.firstIndex(of: 0) {
                let message = Data(buffer[..<nul])
                buffer.removeSubrange(...nul)
                return message
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
            } else if count == 0 {
                guard buffer.isEmpty else { throw RawSocketError.truncated(buffer.count) }
                return nil
            } else if errno == EINTR {
                continue
            } else if errno == ECONNRESET {
                return nil
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw RawSocketError.timedOut
            } else {
                throw RawSocketError.system("recv", errno)
            }
        }
    }

    /// Reads and decodes the next reply; throws if the connection closed instead.
    func readReply() throws -> RawReply {
        guard let message = try readMessage() else { throw RawSocketError.closed }
        return try RawReply(message)
    }

    /// Sends `message` and reads its reply.
    func call(_ message: String) throws -> RawReply {
        try send(message)
        return try readReply()
    }

    /// Whether the agent closed the connection (EOF) before sending anything more.
    func readsEOF() throws -> Bool {
        try readMessage() == nil
    }
}

/// One decoded reply.
struct RawReply {
    let raw: Data
    let error: String?
    let parameters: JSONValue?
    let continues: Bool

    private struct Envelope: Decodable {
        var error: String?
        var parameters: JSONValue?
        var continues: Bool?
    }

    init(_ message: Data) throws {
        raw = message
        let envelope = try JSONDecoder().decode(Envelope.self, from: message)
        error = envelope.error
        parameters = envelope.parameters
        continues = envelope.continues ?? false
    }

    /// A member of the parameters.
    subscript(key: String) -> JSONValue? { parameters?[key] }

    /// The reply as text, for failure messages.
    var text: String { String(decoding: raw, as: UTF8.self) }
}

enum RawSocketError: Error, CustomStringConvertible {
    case system(String, Int32)
    case pathTooLong(String)
    case timedOut
    case closed
    case truncated(Int)

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .pathTooLong(let path): return "socket path too long: \(path)"
        case .timedOut: return "timed out waiting for a reply"
        case .closed: return "the agent closed the connection"
        case .truncated(let count): return "the connection closed inside a message (\(count) bytes)"
        }
    }
}
