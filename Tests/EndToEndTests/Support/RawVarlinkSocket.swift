import CTestCredentials
import Foundation
import Glibc

/// A raw, blocking varlink client on a Unix socket: it sends bytes exactly as given (garbage,
/// truncated or oversized frames included) and reads NUL-terminated replies. One owner at a
/// time (a single thread); `@unchecked Sendable` only so it can be handed to that thread.
final class RawVarlinkSocket: @unchecked Sendable {
    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to `path` as the test user (``TestUser``): the agent's peer credentials name that
    /// user, as for any program of theirs (an agent run as the user serves no other uid); throws
    /// the connect error.
    init(userPath path: String) throws {
        let result = path.withCString {
            cordon_test_connect_as($0, uid_t(TestUser.uid) ?? 0, gid_t(TestUser.gid) ?? 0)
        }
        guard result >= 0 else { throw RawSocketError.system("connect as \(TestUser.name)", -result) }
        fd = result
    }

    /// Connects to `path`; throws the connect error (e.g. `EAGAIN` when the listen backlog is full).
    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError.system("socket", errno) }
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
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw RawSocketError.system("connect", code)
        }
    }

    deinit { close(fd) }

    /// Sends every byte (blocking); throws when the peer is gone.
    func send(_ bytes: [UInt8]) throws {
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

    /// Sends `json` followed by the NUL terminator.
    func send(json: String) throws {
        try send(Array(json.utf8) + [0])
    }

    /// Everything in the socket's receive queue now, without waiting or consuming it (NULs shown
    /// as newlines): what the agent has already written, to check what was sent before what.
    func peek() -> String {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        return count > 0 ? String(decoding: buffer[0..<count].map { $0 == 0 ? 10 : $0 }, as: UTF8.self) : ""
    }

    /// The next reply, waiting at most `timeout` seconds (a safety net against a hung test, not
    /// a measurement); throws `closed` at end of stream.
    func readMessage(timeout: Double = 120) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let nul = pending.firstIndex(of: 0) {
                let message = String(decoding: pending[..<nul], as: UTF8.self)
                pending.removeSubrange(...nul)
                return message
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw RawSocketError.noReply }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno != EINTR { throw RawSocketError.system("poll", errno) }
            if ready <= 0 { continue }
            try receive()
        }
    }

    /// Reads what is there; throws `closed` at end of stream.
    private func receive() throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { throw RawSocketError.closed }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            if errno == ECONNRESET { throw RawSocketError.closed }
            throw RawSocketError.system("recv", errno)
        }
        pending.append(contentsOf: buffer[0..<count])
    }

    /// Sends one call and returns its reply.
    func call(_ json: String, timeout: Double = 120) throws -> String {
        try send(json: json)
        return try readMessage(timeout: timeout)
    }

    /// Whether any byte of a reply has arrived (without waiting or consuming it).
    var hasReplyBytes: Bool {
        if !pending.isEmpty { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Reads replies until the agent closes the connection (or `timeout` passes); returns them.
    func drainUntilClosed(timeout: Double = 120) -> [String] {
        var messages: [String] = []
        while true {
            do {
                messages.append(try readMessage(timeout: timeout))
            } catch {
                return messages
            }
        }
    }
}

/// A raw socket failure.
enum RawSocketError: Error, Equatable, CustomStringConvertible {
    case system(String, Int32)
    case closed
    case noReply

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
        case .closed: return "the agent closed the connection"
        case .noReply: return "no reply"
        }
    }
}

/// The error name of a reply (`nil` for a successful one).
func varlinkErrorName(_ reply: String) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
        return "unparsable reply"
    }
    return object["error"] as? String
}

/// Raises this process's soft `RLIMIT_NOFILE` to at least `wanted` (within the hard limit);
/// returns the soft limit in force afterwards.
@discardableResult
func raiseOpenFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < rlim_t(wanted) {
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(limit.rlim_cur)
}
