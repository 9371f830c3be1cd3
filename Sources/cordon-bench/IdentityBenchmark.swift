import ArgumentParser
import CCordonBench
import Foundation

/// `cordon-bench identity`: `io.cordon.Identity.GetToken` against its baselines, in one run
/// (docs/ARCHITECTURE.md, "Identity").
///
/// cached: a `GetToken` the agent answers from the sealed session against `GetStatus` on the same
/// connection and against the separate-process C echo of `cordon-bench rtt` (replies of GetToken's
/// size). refresh: a `GetToken` that refreshes silently (the local authlib provider issues 30 s
/// tokens, always within the 60 s refresh margin: rotation, sealing, storing) against a direct
/// refresh POST to the same provider's token endpoint on a fresh loopback connection, rotating its
/// own refresh token. Every pair is timed alternately (A B A B …), in `runs` runs, and reported as
/// the median of medians with the spread across runs.
struct IdentityBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Identity tokens through the agent: cached against the round trip, refreshed against the provider.")

    @Option(help: "Cached GetToken calls measured per side and run.")
    var iterations = 5000
    @Option(help: "Refreshes measured per side and run.")
    var refreshes = 200
    @Option(help: "Runs of each comparison (the spread is across runs).")
    var runs = 5
    @Option(help: "The identity test peers (identity_provider.py, authlib and Flask).")
    var peers = "Tests/CordonIdentityTests/peers"

    static let appId = "com.example.bench"
    static let clientID = "cordon-test"

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-identity-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cached = try LocalIdentityProvider(peers: peers)
        defer { cached.stop() }
        let refreshing = try LocalIdentityProvider(peers: peers)
        defer { refreshing.stop() }
        _ = try LoopbackHTTP.object(port: refreshing.port, path: "/admin/config", form: "short_lived=1")
        let policy = directory + "/10-bench-identity.json"
        try Self.policy(providers: [("cached", cached.port), ("refreshing", refreshing.port)], apps: [Self.appId])
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let agent = try BenchAgent(directory: directory + "/agent", adminPolicies: [policy])
        defer { agent.stop() }
        try Self.signIn(agent, "cached", cached)
        try Self.signIn(agent, "refreshing", refreshing)
        let app = try VarlinkConnection(path: agent.socket)
        try app.call("io.cordon.App.Register", ["appId": Self.appId])
        try cachedToken(app, directory: directory)
        try refresh(app, refreshing)
    }

    /// One provider per local peer (`NAME` at 127.0.0.1:`port`), each with its domain
    /// `NAME.example`, and `apps` in one access group for all of them.
    static func policy(providers: [(name: String, port: Int)], apps: [String]) -> String {
        func provider(_ name: String, _ port: Int) -> String {
            let base = "http://127.0.0.1:\(port)"
            return """
                {"name": "\(name)", "endpoints": {"deviceAuthorization": "\(base)/device_authorization",
                 "token": "\(base)/token", "revocation": "\(base)/revoke"}, "clientId": "\(clientID)",
                 "scopes": ["openid"], "flow": "device"}
                """
        }
        let quoted = { (names: [String]) in names.map { "\"\($0)\"" }.joined(separator: ", ") }
        let domains = providers.map { #"{"domain": "\#($0.name).example", "provider": "\#($0.name)"}"# }
        return """
            {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "identity": {
              "providers": [\(providers.map { provider($0.name, $0.port) }.joined(separator: ", "))],
              "domains": [\(domains.joined(separator: ", "))],
              "accessGroups": [{"name": "bench", "apps": [\(quoted(apps))],
                                "domains": [\(quoted(providers.map { "\($0.name).example" }))]}]}}
            """
    }

    /// `SignIn` with `more` on a connection of its own (a streaming call occupies its connection,
    /// docs/PROTOCOL.md): the prompt, approved at the provider, then the outcome.
    static func signIn(_ agent: BenchAgent, _ name: String, _ provider: LocalIdentityProvider) throws {
        let connection = try VarlinkConnection(path: agent.socket)
        try connection.send(
            VarlinkConnection.encode(method: "io.cordon.Identity.SignIn", parameters: ["provider": name], more: true))
        let first = try VarlinkConnection.decode(try connection.receive())
        guard let prompt = (first["parameters"] as? [String: Any])?["prompt"] as? [String: Any],
            let code = prompt["userCode"] as? String
        else { throw BenchError.daemon("SignIn(\(name)) answered \(first["error"] ?? "no prompt")") }
        try provider.approve(code)
        let outcome = try VarlinkConnection.decode(try connection.receive())
        guard outcome["error"] == nil else { throw BenchError.daemon("SignIn(\(name)): \(outcome["error"] ?? "")") }
    }

    /// A cached `GetToken` against `GetStatus` on the same connection and the C echo.
    func cachedToken(_ app: VarlinkConnection, directory: String) throws {
        let getToken = try VarlinkConnection.encode(
            method: "io.cordon.Identity.GetToken", parameters: ["domain": "cached.example"], more: false)
        let status = try VarlinkConnection.encode(method: "io.cordon.Agent.GetStatus", parameters: [:], more: false)
        let roundTrip = { (message: String) in
            { (_: Int) in
                try? app.send(message)
                _ = try? app.receive()
            }
        }
        try app.send(getToken)
        let reply = try app.receive()
        guard reply.contains("\"accessToken\"") else {
            throw BenchError.daemon("GetToken answered \(reply.prefix(120))")
        }
        let echoPath = directory + "/echo.sock"
        let echoPid = ccb_echo_spawn(echoPath, reply.utf8.count, -1)
        guard echoPid > 0 else { throw BenchError.system("starting the echo process", -echoPid) }
        defer { ccb_echo_stop(echoPid) }
        let echo = try RawUnixSocket.connect(to: echoPath)
        let request = Array(getToken.utf8) + [0]
        let echoRoundTrip = { (_: Int) in
            try? echo.send(request)
            _ = try? echo.receiveMessage()
        }
        let againstStatus = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, roundTrip(getToken), roundTrip(status))
        }
        let againstEcho = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, roundTrip(getToken), echoRoundTrip)
        }
        print("cached token (median µs of \(runs) runs [min–max of the runs' medians], p99 µs):")
        Comparison.row("GetToken (cached)", againstStatus.0, against: againstStatus.1, named: "GetStatus")
        Comparison.row("GetStatus", againstStatus.1)
        Comparison.row("GetToken (cached)", againstEcho.0, against: againstEcho.1, named: "C echo")
        Comparison.row("C echo", againstEcho.1)
    }

    /// A silently refreshing `GetToken` against a direct refresh POST to the provider.
    func refresh(_ app: VarlinkConnection, _ provider: LocalIdentityProvider) throws {
        let getToken = try VarlinkConnection.encode(
            method: "io.cordon.Identity.GetToken", parameters: ["domain": "refreshing.example"], more: false)
        var failures = 0
        let agentSide = { (_: Int) in
            try? app.send(getToken)
            let reply = (try? app.receive()) ?? ""
            if !reply.contains("\"accessToken\"") { failures += 1 }
        }
        var refreshToken = try provider.deviceGrantRefreshToken()
        let directSide = { (_: Int) in
            let body = "grant_type=refresh_token&refresh_token=\(refreshToken)&client_id=\(Self.clientID)"
            guard let answer = try? LoopbackHTTP.object(port: provider.port, path: "/token", form: body),
                let next = answer["refresh_token"] as? String
            else {
                failures += 1
                return
            }
            refreshToken = next
        }
        let (agent, direct) = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(refreshes, agentSide, directSide)
        }
        guard failures == 0 else { throw BenchError.daemon("\(failures) refreshes failed") }
        print("silent refresh (median µs of \(runs) runs [min–max of the runs' medians], p99 µs):")
        Comparison.row("GetToken (refresh)", agent, against: direct, named: "direct POST")
        Comparison.row("direct refresh POST", direct)
    }
}
