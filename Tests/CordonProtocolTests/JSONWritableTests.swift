import Foundation
import PropertyBased
import Testing

@testable import CordonProtocol

/// The hand-written JSON of the most frequent replies (`JSONWritable`) equals what the
/// `Encodable` path writes, byte for byte, on random values; and the hand-written reading of
/// the most frequent parameters (`JSONReadable`) agrees with the `Decodable` path, errors
/// included.
@Suite("Hand-written JSON of the hot wire types")
struct JSONWritableTests {
    private let encoder = VarlinkJSONEncoder()

    @Test func statusRepliesAreWrittenAsTheirEncodableForm() throws {
        var generator = Xoshiro(seed: (0x5747, 7, 8, 9))
        for _ in 0..<500 {
            let reply = VarlinkReply(
                parameters: StatusReply(status: .random(using: &generator)),
                continues: Bool.random(using: &generator))
            #expect(try encoder.encode(writing: reply) == encoder.encode(reply))
        }
    }

    @Test func checkRepliesAreWrittenAsTheirEncodableForm() throws {
        var generator = Xoshiro(seed: (0xC4EC, 1, 2, 3))
        for _ in 0..<500 {
            let decision = CordonDecision(
                allowed: Bool.random(using: &generator),
                action: PolicyAction.allCases[Int.random(in: 0..<PolicyAction.allCases.count, using: &generator)],
                reason: randomString(using: &generator),
                truncateTo: Bool.random(using: &generator) ? Int.random(in: -5...1_000_000, using: &generator) : nil,
                rules: (0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomString(using: &generator) })
            let reply = VarlinkReply(parameters: CheckReply(decision: decision))
            #expect(try encoder.encode(writing: reply) == encoder.encode(reply))
        }
    }

    @Test func dataCallRepliesAreWrittenAsTheirEncodableForm() throws {
        var generator = Xoshiro(seed: (0xDA7A, 5, 6, 7))
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0..<1_500, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let get = VarlinkReply(
                parameters: StorageGetReply(value: Data(bytes).base64EncodedString()),
                continues: Bool.random(using: &generator))
            #expect(try encoder.encode(writing: get) == encoder.encode(get))
            let code = VarlinkReply(
                parameters: TokenCodeReply(
                    serial: randomString(using: &generator), code: randomString(using: &generator),
                    next: Bool.random(using: &generator) ? randomString(using: &generator) : nil,
                    secondsLeft: Int.random(in: -1...Int.max, using: &generator),
                    interval: Int.random(in: Int.min...Int.max, using: &generator)))
            #expect(try encoder.encode(writing: code) == encoder.encode(code))
            let token = VarlinkReply(
                parameters: IdentityTokenReply(
                    domain: randomString(using: &generator), provider: randomString(using: &generator),
                    accessToken: randomString(using: &generator), tokenType: "Bearer",
                    expiresAt: Bool.random(using: &generator)
                        ? Double(Int.random(in: 0...4_000_000_000, using: &generator))
                        : Double.random(in: 0...4e9, using: &generator)))
            #expect(try encoder.encode(writing: token) == encoder.encode(token))
        }
    }

    /// The string writer against Foundation, which shares none of its code: every string it writes
    /// reads back as itself, and its escapes fall anywhere in an eight-byte word (the writer skips
    /// clean words whole).
    @Test func stringsAreEscapedWhereverTheyFallInAWord() throws {
        var generator = Xoshiro(seed: (0x57A1, 9, 8, 7))
        let pieces = ["a", "Zz9", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "😀", "\t"]
        for length in 0..<40 {
            for _ in 0..<40 {
                let text = (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }
                    .joined()
                var writer = JSONWriter()
                writer.value(text)
                let bytes = writer.bytes
                let read = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
                #expect(read as? String == text, "\(text.debugDescription)")
                #expect(!bytes.dropFirst().dropLast().contains(where: { $0 < 0x20 }))
            }
        }
        for byte in UInt8.min...UInt8.max {
            let word = UInt64(byte) << 24 | 0x4141_4141_4141_4141 & ~(0xFF << 24)
            let special = byte < 0x20 || byte == 0x22 || byte == 0x5C
            if special { #expect(JSONOutput.mayNeedEscape(word), "\(byte)") }
        }
        #expect(!JSONOutput.mayNeedEscape(0x4141_4141_4141_4141))
    }

    @Test func aNonFiniteDoubleIsRefusedOnBothPaths() {
        var generator = Xoshiro(seed: (1, 2, 3, 4))
        var status = AgentStatus.random(using: &generator)
        status.retryAfterSeconds = .infinity
        let reply = VarlinkReply(parameters: StatusReply(status: status))
        #expect(throws: EncodingError.self) { try encoder.encode(writing: reply) }
        #expect(throws: EncodingError.self) { try encoder.encode(reply) }
    }

    @Test func checkParametersReadAsTheDecodablePathReadsThem() throws {
        var generator = Xoshiro(seed: (0xDEC0, 4, 5, 6))
        let codec = VarlinkCodec()
        for _ in 0..<500 {
            var context: [String: String]?
            if Bool.random(using: &generator) {
                context = [:]
                for _ in 0..<Int.random(in: 0..<4, using: &generator) {
                    context?[randomString(using: &generator)] = randomString(using: &generator)
                }
            }
            let parameters = CheckParameters(
                action: randomString(using: &generator),
                target: Bool.random(using: &generator) ? randomString(using: &generator) : nil, context: context)
            let call = try codec.decodeCall(
                Array(#"{"method":"io.cordon.App.Check","parameters":"#.utf8) + JSONEncoder().encode(parameters)
                    + Array("}".utf8))
            let node = try #require(call.parameters)
            #expect(CheckParameters(readingJSON: node) == parameters)
            #expect(try codec.decodeParameters(CheckParameters.self, fromMember: node) == parameters)
        }
    }

    @Test(arguments: [
        (#"{}"#, "action"),
        (#"{"action":1}"#, "action"),
        (#"{"action":null}"#, "action"),
        (#"{"action":"a","target":2}"#, "target"),
        (#"{"action":"a","context":[]}"#, "context"),
        (#"{"action":"a","context":{"k":1}}"#, "context"),
        (#"[]"#, "parameters"),
    ])
    func malformedCheckParametersFailWithTheSameErrorOnBothPaths(parameters: String, name: String) throws {
        try expectTheSameFailureOnBothPaths(CheckParameters.self, "io.cordon.App.Check", parameters, name)
    }

    @Test func dataCallParametersReadAsTheDecodablePathReadsThem() throws {
        var generator = Xoshiro(seed: (0xDA7B, 1, 5, 9))
        let codec = VarlinkCodec()
        func maybe() -> String? { Bool.random(using: &generator) ? randomString(using: &generator) : nil }
        func node(_ json: Data) throws -> JSONNode {
            let call = try codec.decodeCall(
                Array(#"{"method":"io.cordon.Storage.Get","parameters":"#.utf8) + json + Array("}".utf8))
            return try #require(call.parameters)
        }
        for _ in 0..<500 {
            let record = StorageRecordParameters(
                namespace: maybe(), name: randomString(using: &generator), appId: maybe(), passcode: maybe())
            let recordNode = try node(JSONEncoder().encode(record))
            #expect(StorageRecordParameters(readingJSON: recordNode) == record)
            #expect(try codec.decodeParameters(StorageRecordParameters.self, fromMember: recordNode) == record)
            let code = TokenCodeParameters(serial: randomString(using: &generator), pin: maybe(), passcode: maybe())
            let codeNode = try node(JSONEncoder().encode(code))
            #expect(TokenCodeParameters(readingJSON: codeNode) == code)
            #expect(try codec.decodeParameters(TokenCodeParameters.self, fromMember: codeNode) == code)
            let token = IdentityTokenParameters(domain: randomString(using: &generator))
            let tokenNode = try node(JSONEncoder().encode(token))
            #expect(IdentityTokenParameters(readingJSON: tokenNode) == token)
            #expect(try codec.decodeParameters(IdentityTokenParameters.self, fromMember: tokenNode) == token)
        }
        // Nulls for the optional members and members the type does not know are read as Decodable does.
        let loose = try node(Data(#"{"name":"n","namespace":null,"other":[1],"passcode":null}"#.utf8))
        #expect(StorageRecordParameters(readingJSON: loose) == StorageRecordParameters(name: "n"))
    }

    @Test(arguments: [
        (#"{}"#, "name"), (#"{"name":null}"#, "name"), (#"{"name":1}"#, "name"),
        (#"{"name":"n","namespace":2}"#, "namespace"), (#"{"name":"n","appId":{}}"#, "appId"),
        (#"{"name":"n","passcode":[]}"#, "passcode"), (#"[]"#, "parameters"),
    ])
    func malformedStorageParametersFailWithTheSameErrorOnBothPaths(parameters: String, name: String) throws {
        try expectTheSameFailureOnBothPaths(StorageRecordParameters.self, "io.cordon.Storage.Get", parameters, name)
    }

    @Test(arguments: [
        (#"{}"#, "domain"), (#"{"domain":null}"#, "domain"), (#"{"domain":1}"#, "domain"), (#"[]"#, "parameters"),
    ])
    func malformedGetTokenParametersFailWithTheSameErrorOnBothPaths(parameters: String, name: String) throws {
        try expectTheSameFailureOnBothPaths(
            IdentityTokenParameters.self, "io.cordon.Identity.GetToken", parameters, name)
    }

    @Test func absentOrNullParametersReadAsAnEmptyObject() throws {
        let codec = VarlinkCodec()
        for text in [#"{"method":"io.cordon.App.Check"}"#, #"{"method":"io.cordon.App.Check","parameters":null}"#] {
            let call = try codec.decodeCall(Array(text.utf8))
            #expect(throws: VarlinkError.invalidParameter("action")) {
                try codec.decodeParameters(CheckParameters.self, from: call)
            }
        }
    }
}

/// `parameters` of a `method` call: refused by `init(readingJSON:)`, and the call fails with the
/// same error, naming `name`, whether decoded through ``JSONReadable`` or `Decodable`.
private func expectTheSameFailureOnBothPaths<P: JSONReadable & Equatable>(
    _ type: P.Type, _ method: String, _ parameters: String, _ name: String
) throws {
    let codec = VarlinkCodec()
    let call = try codec.decodeCall(Array(#"{"method":"\#(method)","parameters":\#(parameters)}"#.utf8))
    #expect(P(readingJSON: call.parameters ?? .null) == nil)
    let viaReadable = #expect(throws: VarlinkError.self) { try codec.decodeParameters(type, from: call) }
    let viaDecodable = #expect(throws: VarlinkError.self) {
        try codec.decodeParameters(type, fromMember: call.parameters)
    }
    #expect(viaReadable == viaDecodable)
    #expect(viaReadable == .invalidParameter(name))
}

private func randomString(using generator: inout Xoshiro) -> String {
    JSONValue.randomString(using: &generator)
}

extension AgentStatus {
    fileprivate static func random(using generator: inout Xoshiro) -> AgentStatus {
        func maybe<T>(_ make: (inout Xoshiro) -> T) -> T? {
            Bool.random(using: &generator) ? make(&generator) : nil
        }
        let fractions: [Double] = [0, 0.5, 2.25, 1e-3, 123_456.789, 1e16, -3]
        return AgentStatus(
            state: LifecycleState.allCases[Int.random(in: 0..<LifecycleState.allCases.count, using: &generator)],
            seq: Int.random(in: 0...Int.max, using: &generator) >> Int.random(in: 0..<63, using: &generator),
            failedAttempts: Int.random(in: 0...20, using: &generator),
            maxAttempts: Int.random(in: 0...20, using: &generator),
            retryAfterSeconds: fractions[Int.random(in: 0..<fractions.count, using: &generator)],
            idleTimeoutSeconds: Int.random(in: 0...86_400, using: &generator),
            reauthGraceSeconds: Int.random(in: 0...600, using: &generator),
            ackDeadlineMs: Int.random(in: 0...10_000, using: &generator),
            apps: Int.random(in: 0...1000, using: &generator),
            version: randomString(using: &generator),
            insecureKDF: Bool.random(using: &generator),
            lockTriggers: maybe { g in (0..<Int.random(in: 0..<3, using: &g)).map { _ in randomString(using: &g) } },
            auditProblem: maybe { g in
                AuditProblem(
                    since: fractions[Int.random(in: 0..<fractions.count, using: &g)],
                    unstored: Int.random(in: 0...99, using: &g),
                    error: randomString(using: &g))
            },
            testMode: maybe { g in Bool.random(using: &g) },
            keyProtection: maybe { g in
                KeyProtectionStatus(
                    kind: randomString(using: &g),
                    pcrs: Bool.random(using: &g) ? [0, 7, Int.random(in: 0...23, using: &g)] : nil,
                    attemptsLeft: Bool.random(using: &g) ? Int.random(in: 0...32, using: &g) : nil,
                    maxFailures: Bool.random(using: &g) ? 32 : nil,
                    inLockout: Bool.random(using: &g) ? Bool.random(using: &g) : nil,
                    retryAfterSeconds: Bool.random(using: &g)
                        ? fractions[Int.random(in: 0..<fractions.count, using: &g)] : nil,
                    problem: Bool.random(using: &g) ? randomString(using: &g) : nil,
                    warning: Bool.random(using: &g) ? randomString(using: &g) : nil)
            },
            fleet: maybe { g in
                FleetStatus(
                    device: Bool.random(using: &g) ? randomString(using: &g) : nil,
                    verifiedAt: Bool.random(using: &g)
                        ? fractions[Int.random(in: 0..<fractions.count, using: &g)] : nil,
                    staleAfter: Bool.random(using: &g)
                        ? fractions[Int.random(in: 0..<fractions.count, using: &g)] : nil,
                    stale: Bool.random(using: &g), policyStale: randomString(using: &g),
                    lastCommand: Bool.random(using: &g) ? randomString(using: &g) : nil,
                    lastCommandAt: Bool.random(using: &g) ? 1_700_000_000.5 : nil,
                    problem: Bool.random(using: &g) ? randomString(using: &g) : nil)
            })
    }
}
