import Foundation
import Testing

/// CT-KIP imports against the rsa-ct-kip fake server over TLS (docs/THREAT-MODEL.md, "Software
/// tokens"): the token the agent provisions gives stoken's codes for the seed the server derived;
/// certificate validation is on (a self-signed server is refused, naming the problem) unless the
/// policy allows the audited `--insecure` retry; a server that answers garbage, 500, too much or
/// nothing gets a typed error naming the step, and nothing is stored. cordond and the CLI run as an
/// ordinary user (``UserAgent``): in test mode where the agent trusts the fake server's CA (only
/// test mode takes `--ctkip-ca`), outside it where the server must be refused.
@Suite(.serialized) struct TokenCTKIPTests {
    static let activationCode = "123456789012"

    static func uri(_ server: CTKIPFakeServer) -> String {
        let url = server.url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? server.url
        return "com.rsa.securid://ctkip?url=\(url)&activationCode=\(activationCode)"
    }

    static func started(_ server: CTKIPFakeServer, trusted: Bool = true) async throws -> UserAgent {
        chmod(server.certificate, 0o644)
        return try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, arguments: trusted ? ["--ctkip-ca", server.certificate] : [],
            testMode: trusted)
    }

    /// The audit records of category `tokens`, as `cordon audit --json` prints them.
    static func tokenAudit(_ agent: UserAgent) async throws -> [[String: Any]] {
        let audit = try await agent.cli(["audit", "--json"])
        return audit.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["category"] as? String == "tokens" }
    }

    /// The SDTID the rsa-ct-kip client writes for `seed` (its template, through `stoken export`).
    static func stokenFile(seedHex: String, serial: String, in directory: String) async throws -> String {
        let seed = stride(from: 0, to: seedHex.count, by: 2).map {
            UInt8(seedHex.dropFirst($0).prefix(2), radix: 16) ?? 0
        }
        let expiry = Calendar(identifier: .gregorian).date(byAdding: .day, value: 365, to: Date()) ?? Date()
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy/MM/dd"
        let template = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TKNBatch>
            <TKNHeader><Origin>RSA CT-KIP</Origin><DefPinType>0</DefPinType><DefAddPin>1</DefAddPin><DefDigits>8</DefDigits><DefInterval>60</DefInterval></TKNHeader>
            <TKN><SN>\(serial)</SN><UserLogin></UserLogin><Death>\(formatter.string(from: expiry))</Death><Seed>=\(Data(seed).base64EncodedString())</Seed></TKN>
            </TKNBatch>

            """
        try template.write(toFile: directory + "/template.xml", atomically: true, encoding: .utf8)
        let exported = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/stoken"),
            ["export", "--random", "--sdtid", "--template", directory + "/template.xml"], input: "")
        #expect(exported.status == 0, "\(exported.stderr)")
        try exported.stdout.write(toFile: directory + "/token.sdtid", atomically: true, encoding: .utf8)
        return directory + "/token.sdtid"
    }

    @Test func provisionsFromTheFakeServerAndGivesStokensCodes() async throws {
        let server = try CTKIPFakeServer()
        defer { server.stop() }
        let agent = try await Self.started(server)
        defer { agent.cleanUp() }
        let imported = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.uri(server)])
        #expect(imported.status == 0, "\(imported.stderr)")
        let provisioned = try #require(server.provisioned.first)
        #expect(imported.stdout == "imported \(provisioned.serial) (securid, 8 digits)\n")
        let file = try await Self.stokenFile(
            seedHex: provisioned.seed, serial: provisioned.serial, in: agent.system.path)
        for _ in 0..<2 {
            let before = Int(Date().timeIntervalSince1970)
            let code = try await TokenCLITests.cordon(
                agent, ["code", "--passcode-stdin", provisioned.serial, "--pin", "1234"])
            let after = Int(Date().timeIntervalSince1970)
            #expect(code.status == 0, "\(code.stderr)")
            var expected: Set<String> = []
            for time in before...after {
                let result = try await runCommand(
                    URL(fileURLWithPath: "/usr/bin/stoken"),
                    ["tokencode", "--file=\(file)", "--pin=1234", "--use-time=\(time)"], input: "")
                expected.insert(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(expected.contains(code.stdout.trimmingCharacters(in: .newlines)), "\(code.stdout) \(expected)")
        }
        // Neither the activation code nor the seed is in the audit log.
        let audit = try await Self.tokenAudit(agent)
        let text = audit.map {
            "\($0["action"] as? String ?? "") \($0["outcome"] as? String ?? "") \($0["reason"] as? String ?? "")"
        }
        .joined(separator: "\n")
        #expect(text.contains("tokens.import allow CT-KIP from 127.0.0.1:\(server.port): \(provisioned.serial)"))
        #expect(!text.contains(Self.activationCode) && !text.lowercased().contains(provisioned.seed))
    }

    @Test func aSelfSignedServerIsRefusedUnlessThePolicyAllowsTheAuditedInsecureRetry() async throws {
        let server = try CTKIPFakeServer()
        defer { server.stop() }
        let agent = try await Self.started(server, trusted: false)
        defer { agent.cleanUp() }
        let host = "127.0.0.1:\(server.port)"
        let refused = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.uri(server)])
        TokenCLITests.expectRefused(
            refused,
            "CT-KIP provisioning from \(host) failed at ClientHello: the server's certificate is not trusted "
                + "(CERTIFICATE_VERIFY_FAILED: self-signed, unknown issuer or expired); nothing was imported",
            hint: "check the URL and the activation code, or ask your administrator for a new one")
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--insecure", Self.uri(server)]),
            "the policy does not allow importing from \(host) without certificate validation",
            hint: "tokens.ctkipAllowInsecure decides; ask your administrator, or fix the server's certificate")
        #expect(server.provisioned.isEmpty)
        #expect(try await TokenCLITests.listed(agent).isEmpty)
        try #"{"schema": "cordon.policy.v1", "tokens": {"ctkipAllowInsecure": true}}"#.write(
            toFile: agent.system.appending("admin/20-tokens.json"), atomically: true, encoding: .utf8)
        #expect(try await agent.cli(["policy", "reload"]).status == 0)
        // Allowed now; still refused without the flag.
        let still = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.uri(server)])
        #expect(still.status != 0, "\(still.stdout)")
        let allowed = try await TokenCLITests.cordon(
            agent, ["import", "--passcode-stdin", "--insecure", Self.uri(server)])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try await TokenCLITests.listed(agent).keys.sorted() == server.provisioned.map(\.serial).sorted())
        let audit = try await Self.tokenAudit(agent)
        let actions = audit.map { "\($0["action"] as? String ?? "") \($0["outcome"] as? String ?? "")" }
        #expect(actions.contains("tokens.import.insecure allow"))
        #expect(
            audit.contains {
                let reason = $0["reason"] as? String ?? ""
                return $0["outcome"] as? String == "refused" && reason.contains("without certificate validation")
                    && reason.contains("tokens.ctkipAllowInsecure is false")
            })
    }

    @Test(arguments: [
        ("garbage", "ServerHello: the SOAP envelope is not well-formed XML"),
        ("500", "ClientHello: the server answered HTTP 500"),
        ("oversize", "ClientHello: the answer is larger than 65536 bytes"),
        ("stall", "ClientHello: the server did not answer in time"),
    ])
    func aMisbehavingServerGetsATypedErrorAndNothingIsStored(mode: String, expected: String) async throws {
        let server = try CTKIPFakeServer(mode: mode)
        defer { server.stop() }
        let agent = try await Self.started(server)
        defer { agent.cleanUp() }
        let stored = try await TokenCLITests.cordon(
            agent, ["import", "--passcode-stdin", TokenPolicyTests.securID, "--pin", "1234"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let failed = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.uri(server)])
        #expect(failed.status != 0, "the import succeeded against a \(mode) server")
        #expect(
            failed.stderr.contains("CT-KIP provisioning from 127.0.0.1:\(server.port) failed at \(expected)"),
            "\(failed.stderr)")
        #expect(!failed.stderr.contains(Self.activationCode))
        #expect(try await TokenCLITests.listed(agent).keys.sorted() == [TokenPolicyTests.securIDSerial])
    }

    /// A server that is down refuses the connection: the first refusal is the answer, in words
    /// (not the 10 s connect timeout of the HTTP client's retries, nor the system's raw error).
    @Test func aServerThatIsDownIsReportedAsRefused() async throws {
        let server = try CTKIPFakeServer()
        defer { server.stop() }
        let agent = try await Self.started(server)
        defer { agent.cleanUp() }
        // Nothing listens on its port any more; its certificate stays for the agent's TLS set-up.
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        let failed = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.uri(server)])
        #expect(failed.status != 0)
        #expect(
            failed.stderr.contains(
                "CT-KIP provisioning from 127.0.0.1:\(server.port) failed at ClientHello: "
                    + "the connection to 127.0.0.1:\(server.port) was refused"),
            "\(failed.stderr)")
        #expect(!failed.stderr.contains("errno"), "\(failed.stderr)")
        #expect(try await TokenCLITests.listed(agent).isEmpty)
    }
}
