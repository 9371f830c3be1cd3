import CordonKit
import CordonProtocol
import Foundation
import Testing

/// CT-KIP imports against the rsa-ct-kip fake server over TLS (docs/THREAT-MODEL.md, "Software
/// tokens"): the token the agent provisions gives stoken's codes for the seed the server derived;
/// certificate validation is on (a self-signed server is refused, naming the problem) unless the
/// policy allows the audited `--insecure` retry; a server that answers garbage, 500, too much or
/// nothing gets a typed error naming the step, and nothing is stored.
@Suite(.serialized) struct TokenCTKIPTests {
    static let activationCode = "123456789012"

    static func uri(_ server: CTKIPFakeServer) -> String {
        let url = server.url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? server.url
        return "com.rsa.securid://ctkip?url=\(url)&activationCode=\(activationCode)"
    }

    static func started(_ server: CTKIPFakeServer, trusted: Bool = true) async throws -> DaemonProcess {
        let daemon = try await DaemonProcess.started(arguments: trusted ? ["--ctkip-ca", server.certificate] : [])
        let client = try await daemon.client()
        try await client.initialize(passcode: TokenCLITests.passcode)
        try await client.unlock(passcode: TokenCLITests.passcode)
        await client.close()
        return daemon
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
        let daemon = try await Self.started(server)
        defer { daemon.cleanUp() }
        let imported = try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.uri(server)])
        #expect(imported.status == 0, "\(imported.stderr)")
        let provisioned = try #require(server.provisioned.first)
        #expect(imported.stdout == "imported \(provisioned.serial) (securid, 8 digits)\n")
        let file = try await Self.stokenFile(
            seedHex: provisioned.seed, serial: provisioned.serial, in: daemon.root.path)
        for _ in 0..<2 {
            let before = Int(Date().timeIntervalSince1970)
            let code = try await TokenCLITests.cordon(
                daemon, ["code", "--passcode-stdin", provisioned.serial, "--pin", "1234"])
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
        let client = try await daemon.client()
        let audit = try await client.audit(limit: 1000).filter { $0.category.rawValue == "tokens" }
        let text = audit.map { "\($0.action ?? "") \($0.outcome) \($0.reason)" }.joined(separator: "\n")
        #expect(text.contains("tokens.import allow CT-KIP from 127.0.0.1:\(server.port): \(provisioned.serial)"))
        #expect(!text.contains(Self.activationCode) && !text.lowercased().contains(provisioned.seed))
        await client.close()
        try await daemon.stop()
    }

    @Test func aSelfSignedServerIsRefusedUnlessThePolicyAllowsTheAuditedInsecureRetry() async throws {
        let server = try CTKIPFakeServer()
        defer { server.stop() }
        let daemon = try await Self.started(server, trusted: false)
        defer { daemon.cleanUp() }
        let host = "127.0.0.1:\(server.port)"
        let refused = try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.uri(server)])
        TokenCLITests.expectRefused(
            refused,
            "CT-KIP provisioning from \(host) failed at ClientHello: the server's certificate is not trusted "
                + "(CERTIFICATE_VERIFY_FAILED: self-signed, unknown issuer or expired); nothing was imported",
            hint: "check the URL and the activation code, or ask your administrator for a new one")
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", "--insecure", Self.uri(server)]),
            "the policy does not allow importing from \(host) without certificate validation",
            hint: "tokens.ctkipAllowInsecure decides; ask your administrator, or fix the server's certificate")
        #expect(server.provisioned.isEmpty)
        #expect(try await TokenCLITests.listed(daemon).isEmpty)
        try await TokenPolicyTests.writePolicy(daemon, #"{"ctkipAllowInsecure": true}"#)
        // Allowed now, through the SDK as well as the CLI; still refused without the flag.
        let client = try await daemon.client()
        await #expect(throws: CordonError.self) {
            try await client.importTokens(Self.uri(server), passcode: TokenCLITests.passcode)
        }
        let tokens = try await client.importTokens(Self.uri(server), passcode: TokenCLITests.passcode, insecure: true)
        #expect(tokens.map(\.serial) == server.provisioned.map(\.serial))
        let audit = try await client.audit(limit: 1000).filter { $0.category.rawValue == "tokens" }
        let actions = audit.map { "\($0.action ?? "") \($0.outcome)" }
        #expect(actions.contains("tokens.import.insecure allow"))
        #expect(
            audit.contains {
                $0.outcome == "refused" && $0.reason.contains("without certificate validation")
                    && $0.reason.contains("tokens.ctkipAllowInsecure is false")
            })
        await client.close()
        try await daemon.stop()
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
        let daemon = try await Self.started(server)
        defer { daemon.cleanUp() }
        let stored = try await TokenCLITests.cordon(
            daemon, ["import", "--passcode-stdin", TokenPolicyTests.securID, "--pin", "1234"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let client = try await daemon.client()
        do {
            _ = try await client.importTokens(Self.uri(server), passcode: TokenCLITests.passcode)
            Issue.record("the import succeeded against a \(mode) server")
        } catch let error as CordonError {
            guard case .ctkipFailed(let host, let step, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(host == "127.0.0.1:\(server.port)")
            #expect("\(step): \(reason)".hasPrefix(expected), "\(step): \(reason)")
            #expect(!reason.contains(Self.activationCode))
        }
        #expect(try await TokenCLITests.listed(daemon).keys.sorted() == [TokenPolicyTests.securIDSerial])
        await client.close()
        try await daemon.stop()
    }
}
