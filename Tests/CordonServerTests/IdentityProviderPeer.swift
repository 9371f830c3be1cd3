import CordonIdentity
import Foundation

/// A local identity provider of `Tests/CordonIdentityTests/peers` on 127.0.0.1 (the authlib +
/// Flask OAuth provider, or with `script` the Flask CPA provider), started for one test and ended
/// with it (its standard input closes). Ready once it printed its port: no request races its start.
final class IdentityProviderPeer: @unchecked Sendable {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CordonIdentityTests/peers")
    static var python: String { ProcessInfo.processInfo.environment["PYTHON"] ?? "python3" }

    private let process = Process()
    private let lifeline = Pipe()
    private let scratch: URL
    let port: Int

    init(script: String = "identity_provider.py") throws {
        scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cordon-idp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, Self.peers.appendingPathComponent(script).path, "0"]
        process.standardInput = lifeline
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is `PORT <n>`, printed once it listens.
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            throw PeerError.failed("the provider did not start: \(text)")
        }
        self.port = port
    }

    deinit {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Ends the provider now: its port refuses connections afterwards.
    func stop() {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The browser stand-in as the agent runs it (the URL is appended).
    static var browser: [String] {
        ["/usr/bin/env", python, peers.appendingPathComponent("browser.py").path]
    }

    /// An admin policy declaring this provider for `domains`, with access `groups` (name → apps,
    /// domains); with `oidc`, its issuer and JWKS endpoint too (ID tokens verified).
    func policy(
        flow: String, domains: [String], groups: [(String, [String], [String])], extra: String = "", oidc: Bool = false
    ) -> String {
        let quoted = { (items: [String]) in "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        let groupJSON = groups.map { #"{"name": "\#($0.0)", "apps": \#(quoted($0.1)), "domains": \#(quoted($0.2))}"# }
        let (issuer, jwks) = oidc ? (#""issuer": "\#(base)", "#, #", "jwks": "\#(base)/jwks""#) : ("", "")
        return """
            {"schema": "cordon.policy.v1", "identity": {
              "providers": [{"name": "local", \(issuer)"endpoints": {
                "deviceAuthorization": "\(base)/device_authorization", "authorization": "\(base)/authorize",
                "token": "\(base)/token", "revocation": "\(base)/revoke"\(jwks)},
                "clientId": "cordon-test", "scopes": ["openid"], "flow": "\(flow)"}],
              "domains": [\(domains.map { #"{"domain": "\#($0)", "provider": "local"}"# }.joined(separator: ", "))],
              "accessGroups": [\(groupJSON.joined(separator: ", "))]\(extra)
            }}
            """
    }

    /// What the user or the test does at the provider (`/admin/...`).
    func admin(_ path: String, _ fields: [FormField] = []) throws {
        let (status, _) = try exchange(base + path, method: "POST", body: Array(FormEncoding.encode(fields).utf8))
        guard status == 200 else { throw PeerError.failed("\(path) answered \(status)") }
    }

    /// `/admin/state`: revocations, tokens issued, live refresh tokens.
    func state() throws -> (revoked: [String], issued: Int, liveRefreshTokens: Int) {
        let (_, body) = try exchange(base + "/admin/state", method: "GET", body: [])
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        return (
            object["revoked"] as? [String] ?? [], (object["issued"] as? NSNumber)?.intValue ?? -1,
            (object["live_refresh_tokens"] as? NSNumber)?.intValue ?? -1
        )
    }

    /// The JSON object a GET of `path` answers (`/admin/state`).
    func object(_ path: String) throws -> [String: Any] {
        let (_, body) = try exchange(base + path, method: "GET", body: [])
        return try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }

    /// Runs `peers/post.py`: the body and the answer pass through files (status on the first line).
    private func exchange(_ url: String, method: String, body: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        let name = UUID().uuidString
        let (input, output) = (
            scratch.appendingPathComponent(name + ".in"), scratch.appendingPathComponent(name + ".out")
        )
        try Data(body).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            Self.python, Self.peers.appendingPathComponent("post.py").path, url, method, input.path, output.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let answer = Array(try Data(contentsOf: output))
        guard let newline = answer.firstIndex(of: UInt8(ascii: "\n")),
            let status = Int(String(decoding: answer[..<newline], as: UTF8.self))
        else { throw PeerError.failed("post.py gave no status for \(url)") }
        return (status, Array(answer[(newline + 1)...]))
    }

    enum PeerError: Error {
        case failed(String)
    }
}
