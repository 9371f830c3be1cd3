import CordonProtocol
import Foundation
import Glibc

extension CordonApp {
    /// The document an `openDocument` event announced, as an open `FileHandle`: the sealed
    /// snapshot (a `memfd` no one can write, shrink or grow) of the bytes the agent decided on when
    /// it was shared — rewriting or replacing the sender's file since changes nothing read from it.
    /// The event's `path` (in the sender's view) is informative only.
    ///
    /// Throws `CordonError.denied` when no document with that id waits for this app (each is
    /// handed over once), or `CordonClientError.protocolViolation` when the event carries no id
    /// or the reply came without a descriptor.
    public func openDocument(_ document: DocumentInfo) async throws -> FileHandle {
        guard let id = document.id else {
            throw CordonClientError.protocolViolation("an OpenDocument event without an id")
        }
        let request =
            try VarlinkCodec().encodeBytes(
                VarlinkCall(
                    method: Method.openDocument.rawValue, parameters: OpenDocumentParameters(id: id, token: token)))
            + [0]
        let path = socketPath
        let (reply, descriptor) = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try DocumentReceiver.call(path: path, request: request) })
            }
        }
        do {
            _ = try VarlinkClientConnection.decode(OpenDocumentReply.self, from: Data(reply))
        } catch {
            if let descriptor { Glibc.close(descriptor) }
            throw error
        }
        guard let descriptor else {
            throw CordonClientError.protocolViolation("an OpenDocument reply without a descriptor")
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}

/// One `io.cordon.App.OpenDocument` call on a connection of its own, read with `recvmsg` so the
/// descriptor attached to the reply (SCM_RIGHTS) is received (docs/PROTOCOL.md).
enum DocumentReceiver {
    /// Sends `request` (a NUL-terminated varlink call) and returns the reply (without its NUL)
    /// and the descriptor that came with it, if any.
    static func call(path: String, request: [UInt8]) throws -> ([UInt8], CInt?) {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var offset = 0
        while offset < request.count {
            let sent = request[offset...].withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += sent
        }
        var reply: [UInt8] = []
        var descriptor: CInt?
        while reply.last != 0 {
            let (chunk, received) = try receive(socket)
            if let received {
                if let descriptor { close(descriptor) }
                descriptor = received
            }
            guard !chunk.isEmpty else { break }
            reply += chunk
        }
        guard reply.last == 0 else {
            if let descriptor { close(descriptor) }
            throw CordonClientError.protocolViolation("the agent closed the connection before replying")
        }
        return (Array(reply.dropLast()), descriptor)
    }

    /// One `recvmsg`: the bytes read and a descriptor passed with them (close-on-exec).
    private static func receive(_ socket: CInt) throws -> ([UInt8], CInt?) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // struct cmsghdr (size_t len; int level; int type) then one int, aligned: CMSG_SPACE(4).
        let headerSize = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: headerSize + MemoryLayout<Int>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    var result: Int
                    repeat {
                        result = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
                    } while result < 0 && errno == EINTR
                    if result >= 0 && message.msg_controllen < headerSize {
                        controlBytes.storeBytes(of: 0, as: Int.self)
                    }
                    return result
                }
            }
        }
        guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let length = control.withUnsafeBytes { $0.load(as: Int.self) }
        let level = control.withUnsafeBytes { $0.load(fromByteOffset: MemoryLayout<Int>.size, as: Int32.self) }
        let type = control.withUnsafeBytes {
            $0.load(fromByteOffset: MemoryLayout<Int>.size + MemoryLayout<Int32>.size, as: Int32.self)
        }
        var descriptor: CInt?
        if length >= headerSize + MemoryLayout<CInt>.size, level == SOL_SOCKET, type == Int32(SCM_RIGHTS) {
            descriptor = control.withUnsafeBytes { $0.load(fromByteOffset: headerSize, as: CInt.self) }
        }
        return (Array(buffer[..<count]), descriptor)
    }
}
