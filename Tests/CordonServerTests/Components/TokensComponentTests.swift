import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonTokens
import Foundation
import Testing

@testable import CordonServer

/// `TokensComponent` against a fake host: an `otpauth` TOTP import goes through the passcode
/// check of the lifecycle machine, the codes a reader gets are RFC 6238's at the fake's clock,
/// and an app the policy does not list in `tokens.codeReaders` gets none (docs/ARCHITECTURE.md, "Tokens").
@Suite struct TokensComponentTests {
    typealias Fixture = ComponentFixture<TokensComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)
    /// RFC 6238's SHA-1 seed, "12345678901234567890", in base32.
    static let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let uri = "otpauth://totp/ACME:alice?secret=\(seed)&issuer=ACME&algorithm=SHA1&digits=8&period=30"

    /// Connection 1 is `com.example.notes` (a code reader), connection 2 `com.example.mail` (not).
    static func with(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            documents: [(PolicyDocument(PolicyKeys.Tokens.codeReaders(["com.example.notes"])), admin)],
            configure: { host in
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "a"))
                try? host.register(
                    AppRegistration(
                        connection: 2, appId: "com.example.mail", pid: 102, executable: "/usr/bin/mail",
                        managed: true, token: "b"))
            }, make: { TokensComponent(host: $0, machineIDPath: "/nonexistent/machine-id") }, body)
    }

    /// Imports the RFC 6238 token with the passcode; returns its serial.
    static func importToken(_ fixture: Fixture) async throws -> String {
        let (input, reply) = try await fixture.callAuthorized(
            .tokenImport, ["data": .string(uri), "passcode": .string("2468")]
        ) { try $0.serve(.import, $1) }
        #expect(input == .authorizeRequested(hasPasscode: true, now: 1_000_000))
        let tokens = try #require(reply["parameters"]).decoded(as: TokenListReply.self).tokens
        #expect(tokens.count == 1)
        #expect(tokens.first?.digits == 8)
        #expect(tokens.first?.interval == 30)
        #expect(tokens.first?.nickname == "ACME:alice")
        return try #require(tokens.first?.serial)
    }

    /// An `otpauth-migration://` batch of `count` TOTP accounts (distinct seeds); entry `bad`, if
    /// given, names an algorithm Google Authenticator does not have (9).
    static func migration(count: Int, bad: Int? = nil) -> String {
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

    /// Issue #32, item 7: an import is all or nothing. A batch of 11 into an empty store under the
    /// default `tokens.maxTokens` (10) is `TokenLimit` and stores none (before: ten); one with an
    /// entry that cannot be read stores none; the batch of 10 then imports whole.
    @Test func aBatchPastTheLimitOrWithABadEntryStoresNothing() async throws {
        try await Self.with { fixture in
            for (data, expected) in [
                (Self.migration(count: 11), "io.cordon.Tokens.TokenLimit"),
                (Self.migration(count: 10, bad: 9), "io.cordon.Tokens.TokenFormat"),
            ] {
                let (_, reply) = try await fixture.callAuthorized(
                    .tokenImport, ["data": .string(data), "passcode": .string("2468")]
                ) { try $0.serve(.import, $1) }
                #expect(reply["error"] == .string(expected), "\(reply)")
                #expect(try await fixture.run { host, _, _ throws in try host.database.tokens().isEmpty })
            }
            let (_, reply) = try await fixture.callAuthorized(
                .tokenImport, ["data": .string(Self.migration(count: 10)), "passcode": .string("2468")]
            ) { try $0.serve(.import, $1) }
            let tokens = try #require(reply["parameters"]).decoded(as: TokenListReply.self).tokens
            #expect(tokens.count == 10)
            #expect(try await fixture.run { host, _, _ throws in try host.database.tokens().count } == 10)
        }
    }

    /// The limit the CLI checks on the wire type is the one the importer enforces.
    @Test func theWireLimitIsTheImportersLimit() {
        #expect(TokenImportParameters.maximumDataBytes == TokenInputLimit.bytes)
        #expect(TokenImporter.maximumLength == TokenInputLimit.bytes)
    }

    /// Issue #32, item 9: an HOTP reply carries the current counter's code and no `next` (the next
    /// counter's code would be valid later); a TOTP reply keeps the next interval's.
    @Test func anHOTPReplyHasNoNextCode() async throws {
        try await Self.with { fixture in
            let totpSerial = try await Self.importToken(fixture)
            let uri = "otpauth://hotp/ACME:bob?secret=\(Self.seed)&issuer=ACME&counter=0"
            let (_, imported) = try await fixture.callAuthorized(
                .tokenImport, ["data": .string(uri), "passcode": .string("2468")]
            ) { try $0.serve(.import, $1) }
            let parameters = try #require(imported["parameters"])
            let serial = try #require(parameters.decoded(as: TokenListReply.self).tokens.first?.serial)
            // RFC 4226, appendix D: counters 0 and 1.
            let first = try await Self.code(serial, at: 59, in: fixture)
            #expect(first["parameters"]?["code"] == .string("755224"))
            #expect(first["parameters"]?["next"] == nil, "\(first)")
            #expect(first["parameters"]?["secondsLeft"] == .int(0))
            let second = try await Self.code(serial, at: 59, in: fixture)
            #expect(second["parameters"]?["code"] == .string("287082"))
            #expect(second["parameters"]?["next"] == nil)
            let totp = try await Self.code(totpSerial, at: 59, in: fixture)
            #expect(totp["parameters"]?["next"] != nil)
        }
    }

    /// The code connection `id` reads for `serial` at `time` on the fake's clock.
    static func code(_ serial: String, at time: Double, from id: ConnectionID = 1, in fixture: Fixture)
        async throws -> JSONValue
    {
        try await fixture.run { host, _, _ in host.now = time }
        return try await fixture.call(.tokenCode, ["serial": .string(serial)], from: id) { try $0.serve(.code, $1) }
    }

    @Test func anImportNeedsThePasscodeCheckedByTheMachine() async throws {
        try await Self.with { fixture in
            let serial = try await Self.importToken(fixture)
            let (requests, stored, audit) = try await fixture.run { host, _, _ throws in
                (
                    host.requests.map(\.passcode), try host.database.tokens().map(\.serial),
                    host.audit.map { [$0.appId, $0.action, $0.outcome] as [String?] }
                )
            }
            #expect(requests == ["2468"])
            #expect(stored == [serial])
            // A managed caller's import is audited as that app's.
            #expect(audit == [["com.example.notes", "tokens.import", "allow"]])
        }
    }

    @Test func aRefusedPasscodeImportsNothing() async throws {
        try await Self.with { fixture in
            let (_, reply) = try await fixture.callAuthorized(
                .tokenImport, ["data": .string(Self.uri), "passcode": .string("1357")],
                answer: .wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)
            ) { try $0.serve(.import, $1) }
            #expect(reply["error"] == .string("io.cordon.Agent.WrongPasscode"))
            #expect(try await fixture.run { host, _, _ throws in try host.database.tokens().isEmpty })
        }
    }

    /// RFC 6238, appendix B (SHA-1, 8 digits).
    @Test(arguments: [(59.0, "94287082"), (1_111_111_109, "07081804"), (1_234_567_890, "89005924")])
    func aReaderGetsRFC6238Codes(time: Double, expected: String) async throws {
        try await Self.with { fixture in
            let serial = try await Self.importToken(fixture)
            let reply = try await Self.code(serial, at: time, in: fixture)
            #expect(reply["parameters"]?["code"] == .string(expected))
            #expect(reply["parameters"]?["serial"] == .string(serial))
            let audit = try await fixture.run { host, _, _ in
                host.audit.last.map { [$0.appId, $0.action, $0.outcome] as [String?] }
            }
            #expect(audit == ["com.example.notes", "tokens.code", "allow"])
        }
    }

    @Test func theCodeIsOathtoolsAtTheFakesClock() async throws {
        let oathtool = "/usr/bin/oathtool"
        guard FileManager.default.isExecutableFile(atPath: oathtool) else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: oathtool)
        process.arguments = ["--totp", "-d", "8", "-N", "@1000000", "-b", Self.seed]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let expected = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(expected.count == 8)
        try await Self.with { fixture in
            let serial = try await Self.importToken(fixture)
            let reply = try await Self.code(serial, at: 1_000_000, in: fixture)
            #expect(reply["parameters"]?["code"] == .string(expected))
        }
    }

    @Test func anAppNotInCodeReadersGetsNoCode() async throws {
        try await Self.with { fixture in
            let serial = try await Self.importToken(fixture)
            let reply = try await Self.code(serial, at: 59, from: 2, in: fixture)
            #expect(reply["error"] == .string("io.cordon.Tokens.NotCodeReader"))
            #expect(reply["parameters"]?["appId"] == .string("com.example.mail"))
            #expect(reply["parameters"]?["code"] == nil)
            let audit = try await fixture.run { host, _, _ in
                host.audit.last.map { [$0.appId, $0.action, $0.outcome, $0.reason] as [String?] }
            }
            #expect(audit == ["com.example.mail", "tokens.code", "refused", "not in tokens.codeReaders"])
        }
    }

    @Test func noCodeWhileLockedUnderWhenUnlocked() async throws {
        try await Self.with { fixture in
            let serial = try await Self.importToken(fixture)
            try await fixture.run { host, _, _ in host.lifecycleState = .lockedKeyHeld }
            let reply = try await Self.code(serial, at: 59, in: fixture)
            #expect(reply["error"] == .string("io.cordon.Tokens.Locked"))
        }
    }
}
