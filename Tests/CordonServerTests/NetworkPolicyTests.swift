import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `io.cordon.App.GetNetworkPolicy` through a real socket: the registered app's effective
/// `network` policy (docs/ARCHITECTURE.md, "Pinned channel"), and what a process that did not
/// register gets (docs/THREAT-MODEL.md, "The pinned channel's policy").
@Suite("GetNetworkPolicy", .timeLimit(.minutes(2)))
struct NetworkPolicyTests {
    static let pinA = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    static let pinB = "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="
    static let pinC = "Vjs8r4z+80wjNcr1YKepWQboSIRi63WsWXhIMN+eWys="

    /// Writes `text` as the admin file `name` and reloads; returns the status after the reload.
    @discardableResult
    static func writeAdmin(_ agent: TestAgent, _ name: String, _ text: String, client: CordonClient) async throws
        -> PolicyStatus
    {
        let admin = agent.directory + "/admin"
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try text.write(toFile: admin + "/" + name, atomically: true, encoding: .utf8)
        return try await client.reloadPolicy()
    }

    static let base = #"""
        {"schema": "cordon.policy.v1", "network": {"pins": [
          {"hosts": ["api.example.com", "*.example.com"], "pinSha256": ["\#(pinA)"]}],
          "unpinnedHosts": "deny"}}
        """#

    /// The mail app's override, with a client certificate and key (made by openssl) in
    /// `directory`: the agent checks them before it answers (`ClientCertificateCheck`).
    static func second(in directory: String) throws -> String {
        let (certificate, key) = try clientPair(in: directory)
        return #"""
            {"schema": "cordon.policy.v1", "network": {"pins": [
              {"hosts": ["api.example.com"], "pinSha256": ["\#(pinB)"]}]},
             "overrides": [{"apps": ["com.example.mail"], "network": {
               "pins": [{"hosts": ["mail.example.com"], "pinSha256": ["\#(pinC)"]}],
               "clientCertificate": {"certificate": "\#(certificate)", "key": "\#(key)"}}}]}
            """#
    }

    /// A self-signed certificate and its key in `directory`: `mail.pem`, `mail.key`.
    static func clientPair(in directory: String) throws -> (certificate: String, key: String) {
        let certificate = directory + "/mail.pem"
        let key = directory + "/mail.key"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            key, "-out", certificate, "-subj", "/CN=mail", "-days", "30",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (certificate, key)
    }

    @Test func aRegisteredAppGetsTheMergedPinsWithTheirSources() async throws {
        try await withTestAgent(policies: true) { agent in
            let client = try await agent.client()
            try await Self.writeAdmin(agent, "10-base.json", Self.base, client: client)
            try await Self.writeAdmin(agent, "20-mail.json", try Self.second(in: agent.directory), client: client)
            let notes = try await agent.app("com.example.notes")
            let policy = try await notes.networkPolicy()
            let admin = agent.directory + "/admin"
            #expect(
                policy.pins == [
                    NetworkPolicy.Pin(
                        hosts: ["api.example.com", "*.example.com"], pinSha256: [Self.pinA],
                        source: admin + "/10-base.json#/network/pins/0"),
                    NetworkPolicy.Pin(
                        hosts: ["api.example.com"], pinSha256: [Self.pinB],
                        source: admin + "/20-mail.json#/network/pins/0"),
                ])
            #expect(policy.unpinnedHosts == "deny")
            #expect(policy.unpinnedHostsSource == admin + "/10-base.json#/network/unpinnedHosts")
            #expect(policy.clientCertificate == nil, "the client certificate is the mail app's only")
            await notes.close()
            await client.close()
        }
    }

    @Test func aPerAppOverrideAppliesToThatAppOnly() async throws {
        try await withTestAgent(policies: true) { agent in
            let client = try await agent.client()
            try await Self.writeAdmin(agent, "10-base.json", Self.base, client: client)
            try await Self.writeAdmin(agent, "20-mail.json", try Self.second(in: agent.directory), client: client)
            let mail = try await agent.app("com.example.mail")
            let notes = try await agent.app("com.example.notes")
            let mailPolicy = try await mail.networkPolicy()
            let notesPolicy = try await notes.networkPolicy()
            let admin = agent.directory + "/admin"
            #expect(
                mailPolicy.pins.map(\.source).sorted() == [
                    admin + "/10-base.json#/network/pins/0", admin + "/20-mail.json#/network/pins/0",
                    admin + "/20-mail.json#/overrides/0/network/pins/0",
                ])
            #expect(mailPolicy.pins.first { $0.hosts == ["mail.example.com"] }?.pinSha256 == [Self.pinC])
            #expect(
                mailPolicy.clientCertificate
                    == NetworkPolicy.ClientCertificate(
                        certificate: agent.directory + "/mail.pem", key: agent.directory + "/mail.key")
            )
            #expect(notesPolicy.pins.count == 2)
            #expect(!notesPolicy.pins.contains { $0.hosts.contains("mail.example.com") })
            #expect(notesPolicy.clientCertificate == nil)
            await mail.close()
            await notes.close()
            await client.close()
        }
    }

    @Test func aReloadChangesTheAnswerAndABadFileKeepsTheLastGoodOne() async throws {
        try await withTestAgent(policies: true) { agent in
            let client = try await agent.client()
            let app = try await agent.app("com.example.notes")
            let before = try await app.networkPolicy()
            #expect(before.pins.isEmpty)
            #expect(before.unpinnedHosts == "systemTrust")
            #expect(before.unpinnedHostsSource == "built-in default")

            try await Self.writeAdmin(agent, "10-base.json", Self.base, client: client)
            let after = try await app.networkPolicy()
            #expect(after.pins.map(\.pinSha256) == [[Self.pinA]])
            #expect(after.unpinnedHosts == "deny")

            // A bad pin: the file is rejected and its last good version stays in force.
            let bad = Self.base.replacingOccurrences(of: "*.example.com", with: "*.com")
            let status = try await Self.writeAdmin(agent, "10-base.json", bad, client: client)
            let source = try #require(status.sources.first { $0.path.hasSuffix("/10-base.json") })
            #expect(!source.isApplied)
            #expect(
                source.problems.contains {
                    $0.contains("/network/pins/0/hosts/1")
                        && $0.contains("a wildcard must stand for one label left of at least two labels")
                }, "\(source.problems)")
            #expect(try await app.networkPolicy() == after)
            await app.close()
            await client.close()
        }
    }

    /// The attack: a same-user process that registered nothing (python3 with the `varlink`
    /// package from PyPI) asks for an app's pins, on its own connection and with a made-up token.
    @Test func anUnregisteredProcessCannotReadAnAppsPins() async throws {
        try await withTestAgent(policies: true) { agent in
            let client = try await agent.client()
            try await Self.writeAdmin(agent, "20-mail.json", try Self.second(in: agent.directory), client: client)
            let mail = try await agent.app("com.example.mail")
            #expect(try await mail.networkPolicy().pins.count == 2, "the registered app gets its pins")
            let script = """
                import json, sys, varlink
                out = {}
                with varlink.Client(address="unix:" + sys.argv[1]) as client:
                    with client.open("io.cordon.App", namespaced=True) as app:
                        for name, call in [("own", lambda: app.GetNetworkPolicy()),
                                           ("token", lambda: app.GetNetworkPolicy(token="guessed-token"))]:
                            try:
                                out[name] = {"policy": str(call().policy)}
                            except varlink.VarlinkError as e:
                                out[name] = {"error": e.error()}
                print(json.dumps(out))
                """
            let answer = try Self.runPython(script, arguments: [agent.socketPath], in: agent.directory)
            #expect((answer["own"] as? [String: String])?["error"] == "io.cordon.App.NotRegistered", "\(answer)")
            #expect((answer["token"] as? [String: String])?["error"] == "io.cordon.App.InvalidToken", "\(answer)")
            await mail.close()
            await client.close()
        }
    }

    /// Runs `script` with `python3` (`$PYTHON` when set) from the environment's path, as the
    /// test's user, and parses the JSON it prints.
    static func runPython(_ script: String, arguments: [String], in directory: String) throws -> [String: Any] {
        let file = directory + "/attack.py"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [ProcessInfo.processInfo.environment["PYTHON"] ?? "python3", file] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problems = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "python failed: \(String(decoding: problems, as: UTF8.self))")
        let object = try JSONSerialization.jsonObject(with: data.isEmpty ? Data("{}".utf8) : data)
        return object as? [String: Any] ?? [:]
    }
}
