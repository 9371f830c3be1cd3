import CordonProtocol
import Foundation
import PropertyBased
import Testing

/// The project's own JSON coders against RFC 8259 and against Foundation's coders, which they
/// replace on the wire and must agree with.
@Suite("Varlink JSON coders")
struct VarlinkJSONTests {
    @Test(arguments: [
        (#"{"a":[1,-2,3.5,1e3,-0.25E-2],"b":{"c":null,"d":true,"e":false}}"#, "nested"),
        (#"  {"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00"}  "#, "escapes"),
        (#"{"big":123456789012345678901234567890}"#, "integer beyond 64 bits"),
        ("{\"é\":\"ünïcödé 😀\"}", "raw UTF-8"),
        ("[]", "empty array"), ("\"text\"", "string"), ("-0", "negative zero"), ("9223372036854775807", "Int64.max"),
    ])
    func parsesWhatFoundationParses(text: String, label: String) throws {
        let ours = try JSONNodeParser.parse(Array(text.utf8))
        let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        #expect(Self.same(ours, theirs), "\(label): \(ours) vs \(theirs)")
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "01", "1.", ".5", "1e", "-", "+1",
        "tru", "nul", "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"raw \u{1} control\"", "[1] 2", "NaN", "Infinity", "1e400", "{\"a\":1}}", "{\"k\":1,\"k\":2}",
        "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"b\":10}",
    ])
    func refusesWhatIsNotJSON(text: String) {
        #expect(throws: JSONNodeParser.Failure.self) { try JSONNodeParser.parse(Array(text.utf8)) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONNodeParser.Failure.self) { try JSONNodeParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONNodeParser.Failure.self) { try JSONNodeParser.parse([0x22, 0x5C, 0x6E, 0xFF, 0x22]) }
    }

    @Test func depthIsBounded() throws {
        let deep =
            String(repeating: "[", count: JSONNodeParser.maximumDepth + 1)
            + String(repeating: "]", count: JSONNodeParser.maximumDepth + 1)
        let failure = try #require(throws: JSONNodeParser.Failure.self) { try JSONNodeParser.parse(Array(deep.utf8)) }
        #expect(failure.reason.contains("nested deeper"))
        let allowed =
            String(repeating: "[", count: JSONNodeParser.maximumDepth)
            + String(repeating: "]", count: JSONNodeParser.maximumDepth)
        _ = try JSONNodeParser.parse(Array(allowed.utf8))
    }

    @Test func failuresSayWhereAndWhat() throws {
        let failure = try #require(throws: JSONNodeParser.Failure.self) {
            try JSONNodeParser.parse(Array(#"{"method":"a.B","more":tru}"#.utf8))
        }
        #expect(failure.offset == 23)
        #expect(failure.description == "expected 'true' at byte 23")
    }

    @Test func wireValuesEncodeAsFoundationReadsThem() throws {
        let event = CordonEvent(
            seq: 9, payload: .encryptionKeyUnavailable(ackDeadline: 1_700_000_002.5), reason: .logout,
            time: 1_700_000_000.25, state: .lockedNoKey)
        try expectFoundationAgrees(VarlinkReply(parameters: SubscribeReply(event: event), continues: true))
        let status = AgentStatus(
            state: .unlocked, seq: 3, failedAttempts: 0, maxAttempts: 10, retryAfterSeconds: 0.5,
            idleTimeoutSeconds: 300, reauthGraceSeconds: 0, ackDeadlineMs: 2000, apps: 2, version: "0.1",
            insecureKDF: false, lockTriggers: ["logind", "org.freedesktop.ScreenSaver"])
        try expectFoundationAgrees(VarlinkReply(parameters: StatusReply(status: status)))
        try expectFoundationAgrees(
            VarlinkReply<[String: JSONValue]>(
                parameters: ["reason": .string("quote \" backslash \\ slash / newline \n tab \t bell \u{7} é 😀")],
                error: "io.cordon.Agent.InvalidMessage"))
    }

    @Test func randomValuesRoundTripBothWays() throws {
        var generator = Xoshiro(seed: (0x00C0_FFEE, 1, 2, 3))
        for _ in 0..<500 {
            let value = JSONValue.random(depth: 3, using: &generator)
            let ours = try VarlinkJSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(ours)) == value)
            let theirs = try JSONEncoder().encode(value)
            #expect(try VarlinkJSONDecoder().decode(JSONValue.self, from: theirs) == value)
            #expect(try VarlinkJSONDecoder().decode(JSONValue.self, from: ours) == value)
        }
    }

    @Test func decodingErrorsCarryTheCodingPath() throws {
        let text = #"{"event":{"seq":"nine","kind":"State","reason":"startup","time":1,"state":"unlocked"}}"#
        let error = try #require(throws: DecodingError.self) {
            try VarlinkJSONDecoder().decode(SubscribeReply.self, from: Array(text.utf8))
        }
        guard case .typeMismatch(_, let context) = error else {
            Issue.record("expected a type mismatch, got \(error)")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["event", "seq"])
    }

    @Test func numbersAreWrittenAsFoundationWritesThem() throws {
        let values: [Double] = [0, 1, -1, 2.5, 1e-7, 123_456_789.125, 1e300, -0.000_1]
        let ours = String(decoding: try VarlinkJSONEncoder().encode(values), as: UTF8.self)
        let theirs = try JSONDecoder().decode([Double].self, from: Data(ours.utf8))
        #expect(theirs == values)
        #expect(ours.hasPrefix("[0,1,-1,2.5,"))
        #expect(throws: EncodingError.self) { try VarlinkJSONEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try VarlinkJSONEncoder().encode(["x": Double.infinity]) }
    }

    @Test func integersKeepTheirRange() throws {
        #expect(try VarlinkJSONDecoder().decode(Int64.self, from: Array("-9223372036854775808".utf8)) == .min)
        #expect(try VarlinkJSONDecoder().decode(UInt8.self, from: Array("255".utf8)) == 255)
        #expect(throws: DecodingError.self) { try VarlinkJSONDecoder().decode(UInt8.self, from: Array("256".utf8)) }
        #expect(throws: DecodingError.self) { try VarlinkJSONDecoder().decode(Int.self, from: Array("-1.5".utf8)) }
        #expect(
            String(decoding: try VarlinkJSONEncoder().encode([Int64.min, 0, .max]), as: UTF8.self)
                == "[-9223372036854775808,0,9223372036854775807]")
    }

    @Test func emptyValuesAreEmptyObjects() throws {
        #expect(String(decoding: try VarlinkJSONEncoder().encode(NoParameters()), as: UTF8.self) == "{}")
        #expect(String(decoding: try VarlinkJSONEncoder().encode(Silent()), as: UTF8.self) == "{}")
        #expect(String(decoding: try VarlinkJSONEncoder().encode(["a": Silent()]), as: UTF8.self) == #"{"a":{}}"#)
    }

    @Test func aContainerUsedAfterItsParentMovedOnIsRefused() {
        #expect(throws: EncodingError.self) { try VarlinkJSONEncoder().encode(Misbehaving()) }
    }

    private func expectFoundationAgrees<T: Codable & Sendable>(_ value: VarlinkReply<T>) throws {
        let ours = try VarlinkJSONEncoder().encode(value)
        let oursParsed = try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary
        let theirsParsed = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? NSDictionary
        #expect(oursParsed != nil && oursParsed == theirsParsed, "\(String(decoding: ours, as: UTF8.self))")
    }

    /// Whether a parsed node and a Foundation object say the same.
    static func same(_ node: JSONNode, _ object: Any) -> Bool {
        switch node {
        case .null: return object is NSNull
        case .bool(let value): return (object as? Bool) == value
        case .integer(let value): return (object as? NSNumber)?.int64Value == value
        case .double(let value):
            return (object as? NSNumber).map { abs($0.doubleValue - value) <= abs(value) * 1e-15 } ?? false
        case .string(let value): return (object as? String) == value
        case .array(let elements):
            guard let array = object as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let dictionary = object as? [String: Any] else { return false }
            let last = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
            return last.count == dictionary.count
                && last.allSatisfy { key, value in dictionary[key].map { same(value, $0) } ?? false }
        }
    }
}

/// Writes no container at all.
private struct Silent: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

/// Goes back to an object's container after a sibling member finished it.
private struct Misbehaving: Encodable {
    enum Keys: String, CodingKey { case a, b }
    func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Keys.self)
        var inner = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try outer.encode(1, forKey: .b)
        try inner.encode(2, forKey: .a)
    }
}

extension JSONValue {
    /// A random value; doubles always have a fraction so they do not come back as integers.
    static func random(depth: Int, using generator: inout Xoshiro) -> JSONValue {
        let kinds = depth > 0 ? 7 : 5
        switch Int.random(in: 0..<kinds, using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2:
            return .int(
                Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<63, using: &generator))
        case 3: return .double(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) + 0.5)
        case 4: return .string(randomString(using: &generator))
        case 5:
            return .array(
                (0..<Int.random(in: 0..<4, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<4, using: &generator) {
                members[randomString(using: &generator)] = random(depth: depth - 1, using: &generator)
            }
            return .object(members)
        }
    }

    /// A short random string with the characters JSON must escape and multi-byte ones.
    static func randomString(using generator: inout Xoshiro) -> String {
        let alphabet: [Character] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "😀", "\u{7F}",
        ]
        return String(
            (0..<Int.random(in: 0..<8, using: &generator)).map { _ in
                alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
            })
    }
}

extension VarlinkJSONTests {
    @Test func aRepeatedMemberNameIsRefusedWithItsName() throws {
        let text = #"{"method":"io.cordon.Agent.GetStatus","more":false,"more":true}"#
        let error = try #require(throws: VarlinkError.self) { try VarlinkCodec().decodeHeader(Array(text.utf8)) }
        let reason = try #require(error.parameters["reason"]?.stringValue)
        #expect(reason.contains(#"the member name "more" appears twice in an object at byte 51"#), "\(reason)")
    }
}
