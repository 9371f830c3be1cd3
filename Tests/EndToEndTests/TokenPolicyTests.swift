import Foundation
import Testing

/// The `tokens` policy section enforced by the real daemon (docs/THREAT-MODEL.md, "Software
/// tokens"): `maxTokens`, `importKinds`, `pinRequired`, `cliReadsCodes`, `codeReaders` and
/// `dataAccess`, each refusal with the exact error the refused caller gets (CLI text, SDK error),
/// and nothing already stored lost. cordond, the CLI and the apps run as an ordinary user outside
/// test mode (``UserAgent``); the apps are raw varlink clients that harden themselves, as CordonKit
/// apps do.
@Suite struct TokenPolicyTests {
    /// stoken's `$tok0` (tests/pipe-wrapper.sh): a PINPad v2 token, 8 digits, 60 s, expiring 2038-01-19.
    static let securID = "258491750817210752367175001073261277346642631755724762324173166222072472716737543"
    static let securIDSerial = "584917508172"
    /// A one-entry Google Authenticator batch (scito/extract_otp_secrets' example_export.txt).
    static let migration =
        "otpauth-migration://offline?data=CigKEPqlBekzoNEukL7qlsjBCDYSDnBpQHJhc3BiZXJyeXBpIAEoATACEAEYASAAKLzjp5n4%2F%2F%2F%2F%2FwE%3D"

    /// An `otpauth-migration://` batch of `count` TOTP accounts (distinct seeds); entry `bad`, if
    /// given, names an algorithm Google Authenticator does not have (9), so it cannot be read.
    static func batch(_ count: Int, bad: Int? = nil) -> String {
        var payload: [UInt8] = []
        for index in 0..<count {
            let name = Array("user\(index)@example.com".utf8)
            var entry: [UInt8] = [0x0a, 10] + (0..<10).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0 &+ 1) }
            entry += [0x12, UInt8(name.count)] + name + [0x1a, 7] + Array("Example".utf8)
            entry += [0x20, index == bad ? 9 : 1, 0x28, 1, 0x30, 2]  // SHA1 (or 9), 6 digits, TOTP
            payload += [0x0a, UInt8(entry.count)] + entry
        }
        payload += [0x10, 1, 0x18, 1, 0x20, 0]
        let base64 = Data(payload).base64EncodedString()
        return "otpauth-migration://offline?data="
            + (base64.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? base64)
    }

    static func totp(_ index: Int) -> String {
        "otpauth://totp/Example:user\(index)?secret=\(TokenCLITests.seeds[index].1)&issuer=Example"
    }

    /// Root installs an admin policy with this `tokens` section; the user asks for a reload.
    static func writePolicy(_ agent: UserAgent, _ tokens: String) async throws {
        try #"{"schema": "cordon.policy.v1", "tokens": \#(tokens)}"#.write(
            toFile: agent.system.appending("admin/20-tokens.json"), atomically: true, encoding: .utf8)
        let reload = try await agent.cli(["policy", "reload"])
        #expect(reload.status == 0, "\(reload.stderr)")
    }

    /// One varlink call made by app `appId` (registered and hardened): the reply's error name and
    /// parameters, or its parameters.
    static func call(
        _ agent: UserAgent, as appId: String, _ method: String, _ parameters: [String: Any]
    ) async throws -> [String: Any] {
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self)
        return try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": sys.argv[2]})
            harden()
            reply = call(s, sys.argv[3], json.loads(sys.argv[4]))
            print(json.dumps({"error": error(reply), "parameters": reply.get("parameters", {})}))
            """, [appId, method, encoded])
    }

    /// stoken's code for `securID` with `pin` at each of `times` (the daemon's clock is read between them).
    static func stokenCodes(pin: String, at times: [Int]) async throws -> Set<String> {
        var codes: Set<String> = []
        for time in times {
            let result = try await runCommand(
                URL(fileURLWithPath: "/usr/bin/stoken"),
                ["tokencode", "--token=\(securID)", "--pin=\(pin)", "--use-time=\(time)"], input: "")
            codes.insert(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return codes
    }

    /// `cordon token code` now, and stoken's codes at the seconds around the call.
    static func cliCode(_ agent: UserAgent, _ extra: [String] = []) async throws -> (CommandResult, Set<String>) {
        let before = Int(Date().timeIntervalSince1970)
        let result = try await TokenCLITests.cordon(agent, ["code", "--passcode-stdin", securIDSerial] + extra)
        let after = Int(Date().timeIntervalSince1970)
        return (result, try await stokenCodes(pin: "1234", at: Array(before...after)))
    }

    @Test func importLimitsAndKindsRefuseWithTheirErrorAndKeepWhatIsStored() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        try await Self.writePolicy(agent, #"{"maxTokens": 2, "importKinds": ["otpauth", "ctf"]}"#)
        for index in 0..<2 {
            let imported = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.totp(index)])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let stored = try await TokenCLITests.listed(agent)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.securID, "--pin", "1234"]),
            "the import would pass the policy's limit of 2 tokens; nothing was imported",
            hint: "remove tokens with `cordon token rm SERIAL`, or import fewer at a time")
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.migration]),
            "the policy does not allow importing otpauth-migration tokens",
            hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
        let sdtid = agent.home.appending("token.sdtid")
        try Data(#"<?xml version="1.0"?><TKNBatch><TKNHeader/></TKNBatch>"#.utf8).write(to: URL(fileURLWithPath: sdtid))
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--file", sdtid]),
            "the policy does not allow importing sdtid tokens",
            hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
        // An app gets the same typed errors.
        let limit = try await Self.call(
            agent, as: "com.example.app", "io.cordon.Tokens.Import",
            ["data": TokenCLITests.hotp(0), "passcode": TokenCLITests.passcode])
        #expect(limit["error"] as? String == "io.cordon.Tokens.TokenLimit", "\(limit)")
        #expect((limit["parameters"] as? [String: Any])?["maximum"] as? Int == 2, "\(limit)")
        let kind = try await Self.call(
            agent, as: "com.example.app", "io.cordon.Tokens.Import",
            ["data": Self.migration, "passcode": TokenCLITests.passcode])
        #expect(kind["error"] as? String == "io.cordon.Tokens.KindNotAllowed", "\(kind)")
        #expect((kind["parameters"] as? [String: Any])?["kind"] as? String == "otpauth-migration", "\(kind)")
        #expect(try await TokenCLITests.listed(agent) == stored)
        // A smaller limit does not delete anything; a larger one lets the next import in.
        try await Self.writePolicy(agent, #"{"maxTokens": 1}"#)
        #expect(try await TokenCLITests.listed(agent) == stored)
        try await Self.writePolicy(agent, #"{"maxTokens": 3}"#)
        let third = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.migration])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(try await TokenCLITests.listed(agent).count == 3)
    }

    /// Issue #32, item 7: an import is all or nothing. A Google Authenticator batch of 11 into an
    /// empty store under the default `tokens.maxTokens` (10) is `TokenLimit` and stores none (before,
    /// ten were stored); a batch with one entry that cannot be read stores none; through the CLI and
    /// an app's raw call alike. The batch of 10 then imports whole.
    @Test func aBatchPastMaxTokensOrWithABadEntryImportsNothing() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.batch(11)]),
            "the import would pass the policy's limit of 10 tokens; nothing was imported",
            hint: "remove tokens with `cordon token rm SERIAL`, or import fewer at a time")
        #expect(try await TokenCLITests.listed(agent).isEmpty)
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.app"})
            harden()
            out = {}
            for name, data in [("limit", sys.argv[3]), ("bad", sys.argv[4])]:
                out[name] = error(call(s, "io.cordon.Tokens.Import", {"data": data, "passcode": sys.argv[2]}))
            out["stored"] = len(call(s, "io.cordon.Tokens.List", {"passcode": sys.argv[2]})["parameters"]["tokens"])
            print(json.dumps(out))
            """, [TokenCLITests.passcode, Self.batch(11), Self.batch(10, bad: 9)])
        #expect(answer["limit"] as? String == "io.cordon.Tokens.TokenLimit", "\(answer)")
        #expect(answer["bad"] as? String == "io.cordon.Tokens.TokenFormat", "\(answer)")
        #expect(answer["stored"] as? Int == 0, "\(answer)")
        #expect(try await TokenCLITests.listed(agent).isEmpty)
        let whole = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", Self.batch(10)])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout.split(separator: "\n").count == 10)
        #expect(try await TokenCLITests.listed(agent).count == 10)
    }

    @Test func pinRequiredAndCliReadsCodesDecideWhatTheCLIGets() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        let imported = try await TokenCLITests.cordon(
            agent, ["import", "--passcode-stdin", Self.securID, "--pin", "1234"])
        #expect(imported.stdout == "imported \(Self.securIDSerial) (securid, 8 digits)\n", "\(imported.stderr)")
        // pinRequired false (the default): the stored PIN is used, and the code is stoken's.
        let (stored, expected) = try await Self.cliCode(agent)
        #expect(expected.contains(stored.stdout.trimmingCharacters(in: .newlines)), "\(stored.stderr)")
        try await Self.writePolicy(agent, #"{"pinRequired": true}"#)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["code", "--passcode-stdin", Self.securIDSerial]),
            "token \(Self.securIDSerial) needs its PIN", hint: "give it with `--pin`")
        let (given, expectedGiven) = try await Self.cliCode(agent, ["--pin", "1234"])
        #expect(expectedGiven.contains(given.stdout.trimmingCharacters(in: .newlines)), "\(given.stderr)")
        try await Self.writePolicy(agent, #"{"cliReadsCodes": false}"#)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["code", "--passcode-stdin", Self.securIDSerial, "--pin", "1234"]),
            "io.cordon.cli may not read token codes",
            hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
        // `list` is a reader's call too: refused the same way; with the default policy the token is still there.
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["list", "--passcode-stdin"]),
            "io.cordon.cli may not read token codes",
            hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
        try await Self.writePolicy(agent, "{}")
        #expect(try await TokenCLITests.listed(agent).keys.sorted() == [Self.securIDSerial])
    }

    @Test func codeReadersAndDataAccessDecideWhatAnAppGets() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        try await Self.writePolicy(agent, #"{"codeReaders": ["com.example.reader"], "dataAccess": "whenUnlocked"}"#)
        let imported = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", TokenCLITests.hotp(0)])
        #expect(imported.status == 0, "\(imported.stderr)")
        let serial = try #require(try await TokenCLITests.listed(agent).keys.first)
        let code = { (appId: String) in
            try await Self.call(agent, as: appId, "io.cordon.Tokens.Code", ["serial": serial])
        }
        let other = try await code("com.example.other")
        #expect(other["error"] as? String == "io.cordon.Tokens.NotCodeReader", "\(other)")
        #expect((other["parameters"] as? [String: Any])?["appId"] as? String == "com.example.other")
        let first = try await code("com.example.reader")
        #expect(
            (first["parameters"] as? [String: Any])?["code"] as? String
                == (try await TokenAttackTests.oathtool(TokenCLITests.seeds[0].0, counter: 0)), "\(first)")
        #expect(try await agent.cli(["lock"]).status == 0)
        let locked = try await code("com.example.reader")
        #expect(locked["error"] as? String == "io.cordon.Tokens.Locked", "\(locked)")
        #expect((locked["parameters"] as? [String: Any])?["state"] as? String == "lockedKeyHeld", "\(locked)")
        // afterFirstUnlock: the key is held while locked, so the reader gets the next code.
        try await Self.writePolicy(
            agent, #"{"codeReaders": ["com.example.reader"], "dataAccess": "afterFirstUnlock"}"#)
        let second = try await code("com.example.reader")
        #expect(
            (second["parameters"] as? [String: Any])?["code"] as? String
                == (try await TokenAttackTests.oathtool(TokenCLITests.seeds[0].0, counter: 1)), "\(second)")
        // Removing the reader from the list refuses it again; the token is still there.
        try await Self.writePolicy(agent, #"{"codeReaders": ["com.example.other"]}"#)
        let refused = try await code("com.example.reader")
        #expect(refused["error"] as? String == "io.cordon.Tokens.NotCodeReader", "\(refused)")
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: TokenCLITests.passcode + "\n").status == 0)
        #expect(try await TokenCLITests.listed(agent).keys.sorted() == [serial])
    }
}
