import CCordonBench
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking Unix stream socket: the same client code measures the agent and the baseline.
/// Each instance is used by one thread at a time.
final class RawUnixSocket: @unchecked Sendable {
    let descriptor: Int32
    /// How ``receiveMessage()`` waits for a reply (blocked in `read(2)` unless set).
    var wait = ClientWait.read
    private var buffer = [UInt8](repeating: 0, count: 65536)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Connects to `path`.
    static func connect(to path: String) throws -> RawUnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.system("socket", errno) }
        var address = try makeAddress(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw BenchError.system("connect(\(path))", errno)
        }
        return RawUnixSocket(descriptor: fd)
    }

    /// Binds and listens on `path`.
    static func listen(at path: String) throws -> RawUnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError.system("socket", errno) }
        unlink(path)
        var address = try makeAddress(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0, Glibc.listen(fd, 16) == 0 else { throw BenchError.system("bind(\(path))", errno) }
        return RawUnixSocket(descriptor: fd)
    }

    /// Accepts one connection.
    func accept() throws -> RawUnixSocket {
        let fd = Glibc.accept(descriptor, nil, nil)
        guard fd >= 0 else { throw BenchError.system("accept", errno) }
        return RawUnixSocket(descriptor: fd)
    }

    /// Writes all of `bytes`.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return -1 }
                return write(descriptor, base + offset, raw.count - offset)
            }
            guard written > 0 else { throw BenchError.system("write", errno) }
            offset += written
        }
    }

    /// Reads until a NUL byte ends a message; returns the message's length (without the NUL).
    /// Waits as ``wait`` says.
    func receiveMessage() throws -> Int {
        var total = 0
        while true {
            if wait == .poll { try waitReadable() }
            let count = buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return -1 }
                return read(descriptor, base, raw.count)
            }
            guard count > 0 else { throw BenchError.closed }
            total += count
            if buffer[count - 1] == 0 { return total - 1 }
        }
    }

    /// Waits in `poll(2)` until the socket is readable (or closed).
    private func waitReadable() throws {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while Glibc.poll(&entry, 1, -1) < 0 {
            guard errno == EINTR else { throw BenchError.system("poll", errno) }
        }
    }

    /// Reads one message (until its NUL) and returns it as text, without the NUL.
    func receiveText() throws -> String {
        var bytes: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return -1 }
                return read(descriptor, base, raw.count)
            }
            guard count > 0 else { throw BenchError.closed }
            bytes += buffer[0..<count]
            if buffer[count - 1] == 0 { return String(decoding: bytes.dropLast(), as: UTF8.self) }
        }
    }

    /// The pid of the process at the other end (`SO_PEERCRED`).
    func peerProcess() throws -> Int32 {
        let pid = ccb_peer_pid(descriptor)
        guard pid > 0 else { throw BenchError.system("getsockopt(SO_PEERCRED)", -pid) }
        return pid
    }

    deinit { close(descriptor) }

    private static func makeAddress(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw BenchError.pathTooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}

enum BenchError: Error, CustomStringConvertible {
    case system(String, Int32)
    case closed
    case pathTooLong(String)
    case daemon(String)

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .closed: return "the connection closed"
        case .pathTooLong(let path): return "socket path too long: \(path)"
        case .daemon(let detail): return "cordond: \(detail)"
        }
    }
}
