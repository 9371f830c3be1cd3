import CordonIdentity
import Foundation

/// One exchange the EBU cpa-ios client recorded (`peers/cpa-ios-stubs/<name>/request` and
/// `response`, see the README there): the request's JSON body, the response's status and body.
struct RecordedExchange {
    let name: String
    let requestBody: [UInt8]
    let status: Int
    let body: [UInt8]

    static let folder = LocalProvider.peers.appendingPathComponent("cpa-ios-stubs")

    init(_ name: String) throws {
        self.name = name
        let request = try Data(contentsOf: Self.folder.appendingPathComponent(name).appendingPathComponent("request"))
        let response = try Data(contentsOf: Self.folder.appendingPathComponent(name).appendingPathComponent("response"))
        requestBody = try Self.body(of: Array(request))
        let lines = String(decoding: response, as: UTF8.self).split(separator: "\n", maxSplits: 1)
        let statusLine = lines.first.map(String.init) ?? ""
        guard statusLine.hasPrefix("HTTP/1.1 "), let status = Int(statusLine.dropFirst(9).prefix(3)) else {
            throw RecordedExchangeError.malformed(name)
        }
        self.status = status
        body = try Self.body(of: Array(response))
    }

    /// What follows the blank line after the headers.
    private static func body(of message: [UInt8]) throws -> [UInt8] {
        let separator: [UInt8] = Array("\n\n".utf8)
        guard let start = (0..<max(0, message.count - 1)).first(where: { Array(message[$0..<$0 + 2]) == separator })
        else { throw RecordedExchangeError.malformed("no body") }
        return Array(message[(start + 2)...])
    }

    /// The request body's members.
    var requestObject: [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(requestBody)) as? [String: String]) ?? [:]
    }

    /// The response body's member names.
    var memberNames: Set<String> { Self.memberNames(body) }

    static func memberNames(_ body: [UInt8]) -> Set<String> {
        Set(((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]).keys)
    }

    /// A request's JSON body as an object of strings.
    static func object(_ request: ProviderRequest) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String]) ?? [:]
    }
}

enum RecordedExchangeError: Error {
    case malformed(String)
}
