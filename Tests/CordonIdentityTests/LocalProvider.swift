import ChannelTestPeers
import CordonIdentity
import Foundation

/// A local peer on 127.0.0.1 with a free port, started for one test and stopped with it: the
/// identity provider (`peers/identity_provider.py`, authlib + Flask) or the CPA authorization
/// provider (`peers/cpa_server.py`, Flask).
final class LocalProvider: @unchecked Sendable {
    let process = Process()
    let port: Int

    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("peers")
    static var python: String { ProcessInfo.processInfo.environment["PYTHON"] ?? "python3" }

    /// Holds the provider's standard input: closing it ends the provider.
    private let lifeline = Pipe()
    /// Request and answer files of `post.py`.
    private let scratch: URL

    init(script: String = "identity_provider.py") throws {
        port = try TestPorts.free()
        scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cordon-idp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, Self.peers.appendingPathComponent(script).path, String(port)]
        process.standardInput = lifeline
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The provider as the policy would declare it.
    func configuration(_ flow: SignInFlow) -> ProviderConfiguration {
        ProviderConfiguration(
            name: "local", clientID: "cordon-test", scopes: ["openid"], flow: flow,
            deviceAuthorizationEndpoint: base + "/device_authorization", authorizationEndpoint: base + "/authorize",
            tokenEndpoint: base + "/token", revocationEndpoint: base + "/revoke")
    }

    /// POSTs `request` (with its content type) and returns the status and body.
    func send(_ request: ProviderRequest) async throws -> (status: Int, body: [UInt8]) {
        try exchange(request.url, method: "POST", body: request.body, contentType: request.contentType)
    }

    /// GETs `path` (the JWKS) and returns the status and body.
    func get(_ path: String) throws -> (status: Int, body: [UInt8]) {
        try exchange(base + path, method: "GET", body: [])
    }

    /// POSTs form `fields` to admin `path` and returns the answer's JSON object.
    func adminObject(_ path: String, _ fields: [FormField]) throws -> [String: Any] {
        let (status, body) = try exchange(base + path, method: "POST", body: Array(FormEncoding.encode(fields).utf8))
        guard status == 200, let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw LocalProviderError.admin(path, status)
        }
        return object
    }

    /// Drives the admin endpoint: what the user or the test does.
    func admin(_ path: String, _ fields: [FormField]) async throws {
        let (status, _) = try await post(base + path, body: Array(FormEncoding.encode(fields).utf8))
        guard status == 200 else { throw LocalProviderError.admin(path, status) }
    }

    /// `/admin/state`.
    func state() async throws -> [String: JSONValueLite] {
        let (_, body) = try exchange(base + "/admin/state", method: "GET", body: [])
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        return object.mapValues { value in
            if let list = value as? [String] { return .strings(list) }
            return .number((value as? NSNumber)?.intValue ?? -1)
        }
    }

    /// The Location the authorization endpoint redirects the browser to (the browser stand-in).
    func browserRedirect(_ url: String) throws -> String {
        let process = Process()
        let path = scratch.appendingPathComponent(UUID().uuidString + ".location").path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let output = FileHandle(forWritingAtPath: path)
        else { throw LocalProviderError.admin(path, -1) }
        defer { try? output.close() }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, Self.peers.appendingPathComponent("browser.py").path, "--location", url]
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func post(_ url: String, body: [UInt8]) async throws -> (status: Int, body: [UInt8]) {
        try exchange(url, method: "POST", body: body)
    }

    /// Runs `peers/post.py`: the body and the answer pass through files (status on the first line).
    private func exchange(
        _ url: String, method: String, body: [UInt8], contentType: String = "application/x-www-form-urlencoded"
    ) throws -> (status: Int, body: [UInt8]) {
        let name = UUID().uuidString
        let (input, output) = (
            scratch.appendingPathComponent(name + ".in"), scratch.appendingPathComponent(name + ".out")
        )
        try Data(body).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            Self.python, Self.peers.appendingPathComponent("post.py").path, url, method, input.path, output.path,
            contentType,
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let answer = Array(try Data(contentsOf: output))
        guard let newline = answer.firstIndex(of: UInt8(ascii: "\n")),
            let status = Int(String(decoding: answer[..<newline], as: UTF8.self))
        else { throw LocalProviderError.admin(url, -1) }
        return (status, Array(answer[(newline + 1)...]))
    }
}

enum JSONValueLite: Equatable {
    case strings([String])
    case number(Int)
}

enum LocalProviderError: Error {
    case admin(String, Int)
}
