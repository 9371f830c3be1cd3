import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The `tokens` policy section enforced by the real daemon (docs/THREAT-MODEL.md, "Software
/// tokens"): `maxTokens`, `importKinds`, `pinRequired`, `cliReadsCodes`, `codeReaders` and
/// `dataAccess`, each refusal with the exact error the refused caller gets (CLI text, SDK error),
/// and nothing already stored lost.
@Suite struct TokenPolicyTests {
    /// stoken's `$tok0` (tests/pipe-wrapper.sh): a PINPad v2 token, 8 digits, 60 s, expiring 2038-01-19.
    static let securID = "258491750817210752367175001073261277346642631755724762324173166222072472716737543"
    static let securIDSerial = "584917508172"
    /// A one-entry Google Authenticator batch (scito/extract_otp_secrets' example_export.txt).
    static let migration =
        "otpauth-migration://offline?data=CigKEPqlBekzoNEukL7qlsjBCDYSDnBpQHJhc3BiZXJyeXBpIAEoATACEAEYASAAKLzjp5n4%2F%2F%2F%2F%2FwE%3D"

    static func totp(_ index: Int) -> String {
        "otpauth://totp/Example:user\(index)?secret=\(TokenCLITests.seeds[index].1)&issuer=Example"
    }

    static func writePolicy(_ daemon: DaemonProcess, _ tokens: String) async throws {
        try #"{"schema": "cordon.policy.v1", "tokens": \#(tokens)}"#.write(
            toFile: daemon.adminPolicyDirectory + "/tokens.json", atomically: true, encoding: .utf8)
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        await client.close()
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
    static func cliCode(_ daemon: DaemonProcess, _ extra: [String] = []) async throws -> (CommandResult, Set<String>) {
        let before = Int(Date().timeIntervalSince1970)
        let result = try await TokenCLITests.cordon(daemon, ["code", "--passcode-stdin", securIDSerial] + extra)
        let after = Int(Date().timeIntervalSince1970)
        return (result, try await stokenCodes(pin: "1234", at: Array(before...after)))
    }

    @Test func importLimitsAndKindsRefuseWithTheirErrorAndKeepWhatIsStored() async throws {
        let daemon = try await TokenCLITests.startedDaemon()
        defer { daemon.cleanUp() }
        try await Self.writePolicy(daemon, #"{"maxTokens": 2, "importKinds": ["otpauth", "ctf"]}"#)
        for index in 0..<2 {
            let imported = try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.totp(index)])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let stored = try await TokenCLITests.listed(daemon)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.securID, "--pin", "1234"]),
            "2 tokens are imported, the most the policy allows", hint: "remove one with `cordon token rm SERIAL` first")
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.migration]),
            "the policy does not allow importing otpauth-migration tokens",
            hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
        let sdtid = daemon.root.appending("token.sdtid")
        try Data(#"<?xml version="1.0"?><TKNBatch><TKNHeader/></TKNBatch>"#.utf8).write(to: URL(fileURLWithPath: sdtid))
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", "--file", sdtid]),
            "the policy does not allow importing sdtid tokens",
            hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
        // The SDK gets the same typed errors.
        let client = try await daemon.client()
        await #expect(throws: CordonError.tokenLimit(maximum: 2)) {
            try await client.importTokens(TokenCLITests.hotp(0), passcode: TokenCLITests.passcode)
        }
        await #expect(throws: CordonError.tokenKindNotAllowed(kind: "otpauth-migration")) {
            try await client.importTokens(Self.migration, passcode: TokenCLITests.passcode)
        }
        #expect(try await TokenCLITests.listed(daemon) == stored)
        // A smaller limit does not delete anything; a larger one lets the next import in.
        try await Self.writePolicy(daemon, #"{"maxTokens": 1}"#)
        #expect(try await TokenCLITests.listed(daemon) == stored)
        try await Self.writePolicy(daemon, #"{"maxTokens": 3}"#)
        let third = try await TokenCLITests.cordon(daemon, ["import", "--passcode-stdin", Self.migration])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(try await TokenCLITests.listed(daemon).count == 3)
        await client.close()
        try await daemon.stop()
    }

    @Test func pinRequiredAndCliReadsCodesDecideWhatTheCLIGets() async throws {
        let daemon = try await TokenCLITests.startedDaemon()
        defer { daemon.cleanUp() }
        let imported = try await TokenCLITests.cordon(
            daemon, ["import", "--passcode-stdin", Self.securID, "--pin", "1234"])
        #expect(imported.stdout == "imported \(Self.securIDSerial) (securid, 8 digits)\n", "\(imported.stderr)")
        // pinRequired false (the default): the stored PIN is used, and the code is stoken's.
        let (stored, expected) = try await Self.cliCode(daemon)
        #expect(expected.contains(stored.stdout.trimmingCharacters(in: .newlines)), "\(stored.stderr)")
        try await Self.writePolicy(daemon, #"{"pinRequired": true}"#)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["code", "--passcode-stdin", Self.securIDSerial]),
            "token \(Self.securIDSerial) needs its PIN", hint: "give it with `--pin`")
        let (given, expectedGiven) = try await Self.cliCode(daemon, ["--pin", "1234"])
        #expect(expectedGiven.contains(given.stdout.trimmingCharacters(in: .newlines)), "\(given.stderr)")
        try await Self.writePolicy(daemon, #"{"cliReadsCodes": false}"#)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["code", "--passcode-stdin", Self.securIDSerial, "--pin", "1234"]),
            "io.cordon.cli may not read token codes",
            hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
        // `list` is a reader's call too: refused the same way; with the default policy the token is still there.
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(daemon, ["list", "--passcode-stdin"]),
            "io.cordon.cli may not read token codes",
            hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
        try await Self.writePolicy(daemon, "{}")
        #expect(try await TokenCLITests.listed(daemon).keys.sorted() == [Self.securIDSerial])
        try await daemon.stop()
    }

    @Test func codeReadersAndDataAccessDecideWhatAnAppGets() async throws {
        let daemon = try await TokenCLITests.startedDaemon()
        defer { daemon.cleanUp() }
        try await Self.writePolicy(daemon, #"{"codeReaders": ["com.example.reader"], "dataAccess": "whenUnlocked"}"#)
        let client = try await daemon.client()
        let serial = try #require(
            try await client.importTokens(TokenCLITests.hotp(0), passcode: TokenCLITests.passcode).first?.serial)
        let reader = try await CordonApp.connect(appId: "com.example.reader", socketPath: daemon.socketPath)
        let other = try await CordonApp.connect(appId: "com.example.other", socketPath: daemon.socketPath)
        await #expect(throws: CordonError.notCodeReader(appId: "com.example.other")) {
            try await Tokens(app: other).code(serial: serial)
        }
        let first = try await Tokens(app: reader).code(serial: serial)
        #expect(first.code == (try await TokenAttackTests.oathtool(TokenCLITests.seeds[0].0, counter: 0)))
        try await client.lock()
        await #expect(throws: CordonError.tokensLocked(state: "lockedKeyHeld")) {
            try await Tokens(app: reader).code(serial: serial)
        }
        // afterFirstUnlock: the key is held while locked, so the reader gets the next code.
        try await Self.writePolicy(
            daemon, #"{"codeReaders": ["com.example.reader"], "dataAccess": "afterFirstUnlock"}"#)
        let second = try await Tokens(app: reader).code(serial: serial)
        #expect(second.code == (try await TokenAttackTests.oathtool(TokenCLITests.seeds[0].0, counter: 1)))
        // Removing the reader from the list refuses it again; the token is still there.
        try await Self.writePolicy(daemon, #"{"codeReaders": ["com.example.other"]}"#)
        await #expect(throws: CordonError.notCodeReader(appId: "com.example.reader")) {
            try await Tokens(app: reader).code(serial: serial)
        }
        try await client.unlock(passcode: TokenCLITests.passcode)
        #expect(try await client.tokens(passcode: TokenCLITests.passcode).map(\.serial) == [serial])
        await reader.close()
        await other.close()
        await client.close()
        try await daemon.stop()
    }
}
