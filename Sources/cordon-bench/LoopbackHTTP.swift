import Foundation

/// A blocking HTTP/1.1 POST or GET to 127.0.0.1 on a fresh connection (`Connection: close`), the
/// floor a provider call costs from the machine: `cordon-bench identity`'s direct token endpoint
/// baseline and its setup (docs/PERFORMANCE.md).
enum LoopbackHTTP {
    /// `method` `path` on `127.0.0.1:port` with a form `body`; the status and the body of the answer.
    static func request(port: Int, method: String = "POST", path: String, form body: String = "") throws
        -> (status: Int, body: [UInt8])
    {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError.system("socket", errno) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchError.system("connect 127.0.0.1:\(port)", errno) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        head += "Accept: application/json\r\n"
        if method == "POST" {
            head += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
        }
        let request = Array((head + "\r\n" + (method == "POST" ? body : "")).utf8)
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw BenchError.system("write", errno) }
            sent += written
        }
        // Read until the head's Content-Length is satisfied (as an HTTP client does), else until close.
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        var bodyStart: Int?
        var expected: Int?
        while expected.map({ answer.count < $0 }) ?? true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            answer += chunk[0..<count]
            if bodyStart == nil, let end = headEnd(answer) {
                bodyStart = end + 4
                let head = String(decoding: answer[..<end], as: UTF8.self).lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                    let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                {
                    expected = end + 4 + length
                }
            }
        }
        guard let start = bodyStart,
            let statusLine = String(decoding: answer[..<(start - 4)], as: UTF8.self).split(separator: "\r\n").first,
            let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw BenchError.daemon("no HTTP answer from 127.0.0.1:\(port)\(path)") }
        return (status, Array(answer[start...]))
    }

    /// Where the head ends (the index of its blank line's CR LF CR LF), once it has.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first {
            bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
        }
    }

    /// `request`'s body as a JSON object.
    static func object(port: Int, method: String = "POST", path: String, form body: String = "") throws
        -> [String: Any]
    {
        let (status, answer) = try request(port: port, method: method, path: path, form: body)
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any] else {
            throw BenchError.daemon("\(path) answered HTTP \(status) without a JSON object")
        }
        return object
    }
}
