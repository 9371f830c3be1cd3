import Foundation
import Testing

/// Issue #32, item 8: a token import has one limit, 16 KiB of text (docs/CLI.md, "cordon token";
/// docs/PROTOCOL.md), checked by the CLI where it reads the file or the argument (naming it, its
/// size and the limit, with a hint) and by the agent; an input at the limit imports, even one
/// whose every other byte JSON escapes. A message past cordond's frame limit gets its own text,
/// not "unknown error". cordond and the CLI run as an ordinary user (``UserAgent``).
@Suite struct TokenInputLimitTests {
    static let limit = "a token import is at most 16384 bytes (16 KiB)"
    static let hint =
        "an SDTID file or a Google Authenticator QR code is a few KiB: check that this is the token, "
        + "and import a large export one otpauth-migration URI (one QR code) at a time"

    /// The SDTID file stoken writes for ``TokenPolicyTests/securID`` (a PINPad v2 token).
    static func sdtid() async throws -> String {
        let exported = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/stoken"), ["export", "--token=\(TokenPolicyTests.securID)", "--sdtid"],
            input: "")
        try #require(exported.status == 0, "\(exported.stderr)")
        return exported.stdout
    }

    /// `text` followed by a comment that brings it to `size` bytes, its padding quotes, backslashes
    /// and newlines (each two bytes once JSON escapes it).
    static func padded(_ text: String, to size: Int) -> String {
        let room = size - text.utf8.count - "<!---->".utf8.count
        let padding = String(repeating: "\"\\\n", count: room / 3) + String(repeating: "x", count: room % 3)
        return text + "<!--" + padding + "-->"
    }

    @Test func oversizedFilesAndArgumentsAreRefusedByTheCLIWithTheirSizeAndTheLimit() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        // A 10 MB SDTID file: refused before it is read, with its size; before, cordond answered
        // MessageTooLarge and the CLI said "unknown error … may be different versions".
        let big = agent.home.appending("big.sdtid")
        try Self.padded(try await Self.sdtid(), to: 10_485_760).write(toFile: big, atomically: true, encoding: .utf8)
        let file = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--file", big])
        TokenCLITests.expectRefused(file, "the file \(big) is 10485760 bytes; \(Self.limit)", hint: Self.hint)
        #expect(file.status == 2)
        #expect(!file.stderr.contains("unknown error"))
        // A Google Authenticator export of 10,000 accounts, in a file and (300, under the
        // command line's limit) as the argument.
        let export = agent.home.appending("export.txt")
        let many = TokenPolicyTests.batch(10_000)
        try many.write(toFile: export, atomically: true, encoding: .utf8)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--file", export]),
            "the file \(export) is \(many.utf8.count) bytes; \(Self.limit)", hint: Self.hint)
        let argument = TokenPolicyTests.batch(300)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", argument]),
            "the SOURCE argument is \(argument.utf8.count) bytes; \(Self.limit)", hint: Self.hint)
        // One byte past the limit is refused; at the limit the file imports (the limit can be reached).
        let sdtid = try await Self.sdtid()
        let over = agent.home.appending("over.sdtid")
        try Self.padded(sdtid, to: 16_385).write(toFile: over, atomically: true, encoding: .utf8)
        TokenCLITests.expectRefused(
            try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--file", over]),
            "the file \(over) is 16385 bytes; \(Self.limit)", hint: Self.hint)
        #expect(try await TokenCLITests.listed(agent).isEmpty, "cordond still answers and stored nothing")
        let atLimit = agent.home.appending("limit.sdtid")
        try Self.padded(sdtid, to: 16_384).write(toFile: atLimit, atomically: true, encoding: .utf8)
        let imported = try await TokenCLITests.cordon(agent, ["import", "--passcode-stdin", "--file", atLimit])
        #expect(
            imported.stdout == "imported \(TokenPolicyTests.securIDSerial) (securid, 8 digits)\n", "\(imported.stderr)")
    }

    @Test func theAgentEnforcesTheSameLimitAndTooLargeAMessageHasItsOwnText() async throws {
        let agent = try await TokenCLITests.started()
        defer { agent.cleanUp() }
        // A raw client past the limit: the agent refuses it naming the size and the limit.
        let data = "otpauth://totp/x?secret=" + String(repeating: "A", count: 16_385 - 24)
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reply = call(s, "io.cordon.Tokens.Import", {"data": sys.argv[3], "passcode": sys.argv[2]})
            print(json.dumps({"error": error(reply), "parameters": reply.get("parameters", {})}))
            """, [TokenCLITests.passcode, data])
        #expect(answer["error"] as? String == "io.cordon.Tokens.TokenFormat", "\(answer)")
        let parameters = answer["parameters"] as? [String: Any]
        #expect(parameters?["field"] as? String == "data")
        #expect(parameters?["reason"] as? String == "it is 16385 bytes; \(Self.limit)")
        // A password past cordond's 64 KiB message: its own error and hint; cordond stays up.
        let huge = try await TokenCLITests.cordon(
            agent,
            ["import", "--passcode-stdin", "--password", String(repeating: "p", count: 70_000), TokenCLITests.hotp(0)])
        TokenCLITests.expectRefused(
            huge,
            "the request is larger than cordond accepts (65536 bytes in one message); cordond closed the connection",
            hint: "pass shorter values (a token import is at most 16 KiB), then try again")
        #expect(!huge.stderr.contains("unknown error") && !huge.stderr.contains("different versions"))
        #expect(try await TokenCLITests.listed(agent).isEmpty, "cordond still answers")
    }
}
