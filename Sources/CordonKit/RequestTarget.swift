import Foundation
import NIOHTTP1

/// The parts of an `https` URL a request needs (docs/ARCHITECTURE.md, "Pinned channel").
struct RequestTarget: Sendable {
    let host: String
    let port: Int
    let path: String

    init(url: String) throws(SecureChannelError) {
        guard let components = URLComponents(string: url) else { throw .invalidURL(url, reason: "it does not parse") }
        guard components.scheme?.lowercased() == "https" else {
            throw .invalidURL(url, reason: "the scheme must be https")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalidURL(url, reason: "it has no host") }
        guard components.user == nil, components.password == nil else {
            throw .invalidURL(url, reason: "credentials in the URL are refused")
        }
        let port = components.port ?? 443
        guard (1...65535).contains(port) else { throw .invalidURL(url, reason: "the port is not 1...65535") }
        self.host = host.lowercased()
        self.port = port
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.path = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// The request head: `Host` (`:authority` in HTTP/2), `Content-Length`, then `headers`.
    func head(method: String, headers: [(name: String, value: String)], bodyLength: Int, http2: Bool) -> HTTPRequestHead
    {
        var fields = HTTPHeaders()
        fields.add(name: "host", value: port == 443 ? host : "\(host):\(port)")
        if bodyLength > 0 || !["GET", "HEAD"].contains(method) {
            fields.add(name: "content-length", value: "\(bodyLength)")
        }
        if !http2 { fields.add(name: "connection", value: "close") }
        for (name, value) in headers where name.lowercased() != "host" { fields.add(name: name, value: value) }
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: fields)
    }
}
