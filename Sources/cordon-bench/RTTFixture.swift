import Foundation

/// The agent `cordon-bench rtt` measures, set up so that every method has something real to
/// answer (docs/ARCHITECTURE.md, "Storage", "Tokens", "Identity"): initialized and unlocked, a
/// 1 KiB record stored by the storage app, a TOTP token imported that the tokens app may read
/// (`tokens.codeReaders`), and a session signed in at a local identity provider
/// (`identity_provider.py`) whose token the identity app gets from the cache. Each method's
/// connection registers its own app first (`prelude`). The set-up is the one of
/// `cordon-bench storage --kv`, `tokens` and `identity`.
final class RTTFixture {
    /// The agent's socket.
    let socket: String
    /// Why a method cannot be measured here (the identity provider did not start, or the agent is
    /// not the benchmark's own).
    private(set) var skipped: [RTTMethod: String] = [:]
    private let agent: BenchAgent?
    private let provider: LocalIdentityProvider?
    private var tokenSerial = ""
    /// The record Storage.Get reads (the Secret Service peers store the same bytes).
    let value: [UInt8]

    /// An agent of the benchmark's own in `directory`, set up for `methods`.
    init(directory: String, methods: [RTTMethod], identityPeers: String, valueBytes: Int = 1024) throws {
        value = [UInt8](repeating: 0x5A, count: valueBytes)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var admin: [String] = []
        var provider: LocalIdentityProvider?
        if methods.contains(.identityGetToken) {
            do {
                provider = try LocalIdentityProvider(peers: identityPeers)
            } catch BenchError.daemon(let reason) {
                skipped[.identityGetToken] = "\(reason) (--identity-peers \(identityPeers))"
            } catch {
                skipped[.identityGetToken] =
                    "the identity provider did not start: \(error) (--identity-peers \(identityPeers))"
            }
        }
        self.provider = provider
        if let provider, let app = RTTMethod.identityGetToken.appId {
            let file = directory + "/10-bench-identity.json"
            try IdentityBenchmark.policy(providers: [("cached", provider.port)], apps: [app])
                .write(toFile: file, atomically: true, encoding: .utf8)
            admin.append(file)
        }
        if methods.contains(.tokensCode), let app = RTTMethod.tokensCode.appId {
            let file = directory + "/10-bench-code-readers.json"
            try TokensBenchmark.codeReadersPolicy([app]).write(toFile: file, atomically: true, encoding: .utf8)
            admin.append(file)
        }
        let agent: BenchAgent
        do {
            agent = try BenchAgent(directory: directory + "/agent", adminPolicies: admin)
        } catch {
            provider?.stop()
            throw error
        }
        self.agent = agent
        socket = agent.socket
        do {
            if methods.contains(.tokensCode) {
                tokenSerial = try TokensBenchmark.importToken(
                    agent, ["data": "otpauth://totp/bench?secret=\(TokensBenchmark.totpSecret)"])
            }
            if let provider { try IdentityBenchmark.signIn(agent, "cached", provider) }
        } catch {
            stop()
            throw error
        }
    }

    /// An agent already running at `socket`: only the methods that need no set-up.
    init(socket: String) {
        self.socket = socket
        agent = nil
        provider = nil
        value = []
        for method in RTTMethod.allCases where method.appId != nil {
            skipped[method] = "needs the benchmark's own agent (without --socket)"
        }
    }

    /// The call measured for `method`, the `Register` its connection sends first (nil: none) and
    /// the calls sent after every connection registered and the benchmark hardened itself, before
    /// measuring; nil when the method is skipped.
    func call(_ method: RTTMethod) throws -> RTTCall? {
        guard skipped[method] == nil else { return nil }
        let register = try method.appId.map { try Self.encode("io.cordon.App.Register", ["appId": $0]) }
        guard let (request, prelude) = try measured(method) else { return nil }
        return RTTCall(method: method, register: register, prelude: prelude, request: request)
    }

    private func measured(_ method: RTTMethod) throws -> (request: String, prelude: [String])? {
        var prelude: [String] = []
        switch method {
        case .getStatus:
            return (#"{"method":"io.cordon.Agent.GetStatus"}"#, prelude)
        case .check:
            return (Self.checkRequest, prelude)
        case .storageGet:
            prelude.append(
                try Self.encode(
                    "io.cordon.Storage.Put", ["name": "record", "value": Data(value).base64EncodedString()]))
            return (try Self.encode("io.cordon.Storage.Get", ["name": "record"]), prelude)
        case .tokensCode:
            return (try Self.encode("io.cordon.Tokens.Code", ["serial": tokenSerial]), prelude)
        case .identityGetToken:
            return (try Self.encode("io.cordon.Identity.GetToken", ["domain": "cached.example"]), prelude)
        }
    }

    /// The policy check measured: a paste of 120 characters into `com.example.mail`.
    static let checkRequest =
        #"{"method":"io.cordon.App.Check","parameters":{"action":"pasteboard.paste","#
        + #""target":"com.example.mail","context":{"length":"120"}}}"#

    func stop() {
        agent?.stop()
        provider?.stop()
    }

    private static func encode(_ method: String, _ parameters: [String: Any]) throws -> String {
        try VarlinkConnection.encode(method: method, parameters: parameters, more: false)
    }
}
