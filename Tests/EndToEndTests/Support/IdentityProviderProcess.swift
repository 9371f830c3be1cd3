import Foundation

/// The local authlib identity provider (`Tests/CordonIdentityTests/peers/identity_provider.py`) on
/// 127.0.0.1 for an end-to-end test, ended with it (its standard input closes). Ready once it
/// printed its port. What the user does at the provider goes through its admin endpoints, posted
/// with `peers/post.py`.
final class IdentityProviderProcess: @unchecked Sendable {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("CordonIdentityTests/peers")
    static var python: String { ProcessInfo.processInfo.environment["PYTHON"] ?? "python3" }

    private let process = Process()
    private let lifeline = Pipe()
    let scratch: TemporaryDirectory
    let port: Int

    init() throws {
        scratch = try TemporaryDirectory()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, Self.peers.appendingPathComponent("identity_provider.py").path, "0"]
        process.standardInput = lifeline
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            throw ProviderProcessError.failed("the provider did not start: \(text)")
        }
        self.port = port
    }

    deinit {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        scratch.remove()
    }

    /// Ends the provider now: its port refuses connections afterwards.
    func stop() {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// An admin policy: this provider (`flow`) for `domain`, shared by `apps`.
    func policy(flow: String, domain: String, apps: [String], issuerOnly: Bool = false) -> String {
        let quoted = apps.map { "\"\($0)\"" }.joined(separator: ", ")
        // Named by its issuer alone, the agent discovers every endpoint (OpenID Connect Discovery).
        let endpoints =
            issuerOnly
            ? #""issuer": "\#(base)","#
            : """
            "endpoints": {
                "deviceAuthorization": "\(base)/device_authorization", "authorization": "\(base)/authorize",
                "token": "\(base)/token", "revocation": "\(base)/revoke"},
            """
        return """
            {"schema": "cordon.policy.v1", "identity": {
              "providers": [{"name": "local", \(endpoints)
                "clientId": "cordon-test", "scopes": ["openid"], "flow": "\(flow)"}],
              "domains": [{"domain": "\(domain)", "provider": "local"}],
              "accessGroups": [{"name": "group", "apps": [\(quoted)], "domains": ["\(domain)"]}]
            }}
            """
    }

    /// A program for `cordond --identity-browser`: the browser stand-in, which follows the
    /// provider's redirect to the agent's loopback listener, installed in `directory` where an
    /// ordinary user may run it (with Debian's interpreter: a root-only one is out of their reach).
    func browserProgram(in directory: String) throws -> String {
        let path = directory + "/browser"
        let script =
            "#!/bin/sh\nexec /usr/bin/python3 \(Self.peers.appendingPathComponent("browser.py").path) \"$@\"\n"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// POSTs form `fields` to the admin endpoint `path`.
    func admin(_ path: String, _ fields: [(String, String)]) async throws {
        let input = scratch.appending(UUID().uuidString + ".in")
        let output = scratch.appending(UUID().uuidString + ".out")
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map {
            "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        try body.write(toFile: input, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/env"),
            [Self.python, Self.peers.appendingPathComponent("post.py").path, base + path, "POST", input, output])
        let answer = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard result.status == 0, answer.hasPrefix("200\n") else {
            throw ProviderProcessError.failed("\(path) answered \(answer.prefix(40)) \(result.stderr)")
        }
    }

    enum ProviderProcessError: Error {
        case failed(String)
    }
}
