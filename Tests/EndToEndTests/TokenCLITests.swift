import Foundation
import Testing

/// `cordon token rename|rm|reset` against the real daemon (docs/CLI.md): each change is made with the
/// passcode, each refusal prints its error and hint and changes nothing stored. cordond and the CLI
/// run as an ordinary user outside test mode (``UserAgent``).
@Suite struct TokenCLITests {
    static let passcode = UserAgent.passcode
    static let wrong = "Wrong-Guess-4409"
    /// Two HOTP seeds (hex and base32) whose codes oathtool checks.
    static let seeds = [
        ("3132333435363738393031323334353637383930", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"),
        ("6162636465666768696a6b6c6d6e6f7071727374", "MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U"),
    ]

    static func hotp(_ index: Int, counter: Int = 0) -> String {
        "otpauth://hotp/Example:user\(index)?secret=\(seeds[index].1)&issuer=Example&counter=\(counter)"
    }

    /// `cordon token ARGUMENTS` as the user, with the passcode on standard input.
    static func cordon(_ agent: UserAgent, _ arguments: [String], passcode: String? = passcode) async throws
        -> CommandResult
    {
        try await agent.cli(["token"] + arguments, input: passcode.map { "\($0)\n" })
    }

    /// The serials and nicknames `cordon token list --json` prints.
    static func listed(_ agent: UserAgent) async throws -> [String: String] {
        let list = try await cordon(agent, ["list", "--json", "--passcode-stdin"])
        #expect(list.status == 0, "\(list.stderr)")
        let tokens = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
        var result: [String: String] = [:]
        for token in tokens { result[token["serial"] as? String ?? "?"] = token["nickname"] as? String ?? "" }
        return result
    }

    /// Checks a refused command: its exit status, its error line and its hint.
    static func expectRefused(_ result: CommandResult, _ message: String, hint: String) {
        #expect(result.status != 0)
        #expect(result.stderr.contains("cordon: error: \(message)"), "\(result.stderr)")
        #expect(result.stderr.contains("hint: \(hint)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// The user's agent, initialized and unlocked; unbound apps trusted (the token suites' apps).
    static func started() async throws -> UserAgent {
        try await UserAgent(policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
    }

    /// Issue #32, item 9: the refusal of a token bound to another device says `cordon token list`
    /// shows this device's id, and it does: the id it prints is the one stoken must bind the token
    /// to for the import to pass.
    @Test func theDeviceIdTokenListPrintsIsTheOneABoundTokenMustBeIssuedTo() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let list = try await Self.cordon(agent, ["list", "--passcode-stdin"])
        #expect(list.status == 0, "\(list.stderr)")
        let line = try #require(
            list.stdout.split(separator: "\n").first { $0.hasPrefix("device id: ") }, "\(list.stdout)")
        let deviceID = String(line.dropFirst("device id: ".count).prefix { $0 != " " })
        #expect(deviceID.count == 32 && deviceID.allSatisfy(\.isHexDigit), "\(line)")
        /// stoken's `$tok0` bound to device `id`.
        func bound(to id: String) async throws -> String {
            let exported = try await runCommand(
                URL(fileURLWithPath: "/usr/bin/stoken"),
                ["export", "--token=\(TokenPolicyTests.securID)", "--new-devid=\(id)"], input: "")
            #expect(exported.status == 0, "\(exported.stderr)")
            return exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let other = deviceID.hasPrefix("0") ? "1" + deviceID.dropFirst() : "0" + deviceID.dropFirst()
        Self.expectRefused(
            try await Self.cordon(agent, ["import", "--passcode-stdin", try await bound(to: String(other))]),
            "the token cannot be used on this device: the token is bound to another device",
            hint: "ask for a token issued to this device: `cordon token list` shows its device id")
        let imported = try await Self.cordon(agent, ["import", "--passcode-stdin", try await bound(to: deviceID)])
        #expect(
            imported.stdout == "imported \(TokenPolicyTests.securIDSerial) (securid, 8 digits)\n", "\(imported.stderr)")
    }

    @Test func renameRemoveAndResetChangeOnlyWhatTheyNameAndRefusalsChangeNothing() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        for index in 0..<2 {
            let imported = try await Self.cordon(agent, ["import", "--passcode-stdin", Self.hotp(index)])
            #expect(imported.status == 0 && imported.stdout.hasSuffix("(hotp, 6 digits)\n"), "\(imported.stderr)")
        }
        let original = try await Self.listed(agent)
        let serials = original.keys.sorted()
        try #require(serials.count == 2)
        let (first, second) = (serials[0], serials[1])

        let renamed = try await Self.cordon(agent, ["rename", "--passcode-stdin", first, "Work VPN"])
        #expect(renamed.stdout == "renamed \(first) to Work VPN\n", "\(renamed.stderr)")
        Self.expectRefused(
            try await Self.cordon(agent, ["rename", "--passcode-stdin", first, String(repeating: "n", count: 33)]),
            "the token's nickname is not acceptable: a nickname has 1 to 32 characters, not 33",
            hint: "check the input")
        Self.expectRefused(
            try await Self.cordon(agent, ["rename", "--passcode-stdin", "oath-0000000000000000", "x"]),
            "no token has the serial oath-0000000000000000", hint: "list the tokens with `cordon token list`")
        Self.expectRefused(
            try await Self.cordon(agent, ["rename", "--passcode-stdin", first, "Stolen"], passcode: Self.wrong),
            "wrong passcode; ", hint: "")
        #expect(try await Self.listed(agent) == [first: "Work VPN", second: original[second] ?? "?"])

        Self.expectRefused(
            try await Self.cordon(agent, ["rm", "--passcode-stdin", second], passcode: Self.wrong),
            "wrong passcode; ", hint: "")
        Self.expectRefused(
            try await Self.cordon(agent, ["rm", "--passcode-stdin", "oath-0000000000000000"]),
            "no token has the serial oath-0000000000000000", hint: "list the tokens with `cordon token list`")
        #expect(try await Self.listed(agent).count == 2)
        let removed = try await Self.cordon(agent, ["rm", "--passcode-stdin", second])
        #expect(removed.stdout == "removed \(second)\n", "\(removed.stderr)")
        #expect(try await Self.listed(agent) == [first: "Work VPN"])

        let unconfirmed = try await Self.cordon(agent, ["reset", "--passcode-stdin"])
        #expect(unconfirmed.status != 0 && unconfirmed.stderr.contains("reset deletes every token; confirm with --yes"))
        Self.expectRefused(
            try await Self.cordon(agent, ["reset", "--yes", "--passcode-stdin"], passcode: Self.wrong),
            "wrong passcode; ", hint: "")
        #expect(try await Self.listed(agent) == [first: "Work VPN"])
        let reset = try await Self.cordon(agent, ["reset", "--yes", "--passcode-stdin"])
        #expect(reset.stdout == "every token was deleted\n", "\(reset.stderr)")
        #expect(try await Self.listed(agent).isEmpty)
        let none = try await Self.cordon(agent, ["list", "--passcode-stdin"])
        #expect(none.stdout.hasPrefix("no tokens\ndevice id: "), "\(none.stdout)")

        // The new key generation seals and opens: the same token imports again and gives oathtool's code.
        let again = try await Self.cordon(agent, ["import", "--passcode-stdin", Self.hotp(0, counter: 3)])
        #expect(again.status == 0, "\(again.stderr)")
        let serial = try #require(try await Self.listed(agent).keys.first)
        let code = try await Self.cordon(agent, ["code", "--passcode-stdin", serial])
        #expect(code.stdout == (try await TokenAttackTests.oathtool(Self.seeds[0].0, counter: 3)) + "\n")

        let audit = try await agent.cli(["audit", "--app", "io.cordon.cli", "--json"])
        let actions = audit.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["category"] as? String == "tokens" }
        let pairs = actions.map { ($0["action"] as? String ?? "", $0["outcome"] as? String ?? "") }
        for action in ["tokens.rename", "tokens.remove", "tokens.reset", "tokens.import", "tokens.code"] {
            #expect(pairs.contains { $0 == (action, "allow") }, "\(action)")
        }
        #expect(pairs.contains { $0 == ("tokens.rename", "refused") })
    }
}
