import Testing

@testable import CordonPolicy

@Suite("Positioned JSON: values, positions and pointers")
struct JSONParserTests {
    typealias Support = ParserTestSupport

    /// `[line, column]` of a value, `[]` when there is none.
    func position(_ json: PositionedJSON?) -> [Int] { json.map { [$0.line, $0.column] } ?? [] }

    @Test func parsesEveryKindOfValue() throws {
        let json = try #require(
            Support.json(#"{"n": null, "t": true, "f": false, "i": -12, "s": "x", "a": [1], "o": {}}"#))
        #expect(json["n"]?.value == .null)
        #expect(json["t"]?.value == .bool(true))
        #expect(json["f"]?.value == .bool(false))
        #expect(json["i"]?.value == .number(PositionedJSON.Number(text: "-12")))
        #expect(json["s"]?.value == .string("x"))
        #expect(json["a"]?[0]?.value == .number(PositionedJSON.Number(text: "1")))
        #expect(json["o"]?.value == .object([]))
        #expect(json["missing"] == nil)
        #expect(json["a"]?[1] == nil)
    }

    @Test func keepsMembersInDocumentOrder() throws {
        let json = try #require(Support.json(#"{"b": 1, "a": 2, "c": 3}"#))
        guard case .object(let members) = json.value else { throw Failure("not an object") }
        #expect(members.map(\.key) == ["b", "a", "c"])
    }

    @Test func scalarsAtTheTopLevel() {
        #expect(Support.json("  42 ")?.value == .number(PositionedJSON.Number(text: "42")))
        #expect(Support.json("\"hi\"")?.value == .string("hi"))
        #expect(Support.json("null")?.value == .null)
    }

    @Test func recordsLinesAndColumns() throws {
        let text = "{\n  \"lock\": {\n    \"idle\": 300,\n\t\"list\": [true,\r\n false]\n  }\n}"
        let json = try #require(Support.json(text))
        #expect(position(json) == [1, 1])
        let lock = try #require(json["lock"])
        #expect(position(lock) == [2, 11])
        let idle = try #require(lock["idle"])
        #expect(position(idle) == [3, 13])
        let list = try #require(lock["list"])
        #expect(position(list) == [4, 10])
        #expect(position(list[1]) == [5, 2])
        guard case .object(let members) = lock.value else { throw Failure("not an object") }
        #expect(members.map { [$0.keyLine, $0.keyColumn] } == [[3, 5], [4, 2]])
    }

    @Test func columnsCountUnicodeScalarsNotBytes() throws {
        let json = try #require(Support.json(#"{"é🙂": "ü", "x": 1}"#))
        #expect(position(json["x"]) == [1, 18])
        #expect(json["é🙂"]?.value == .string("ü"))
    }

    @Test func loneCarriageReturnEndsALine() throws {
        let json = try #require(Support.json("[\r1,\r\n2]"))
        #expect(position(json[0]) == [2, 1])
        #expect(position(json[1]) == [3, 1])
    }

    @Test func pointersNameEveryValue() throws {
        let json = try #require(Support.json(#"{"overrides": [{"apps": ["a.b"]}], "x": {"y": 1}}"#))
        #expect(json.pointer == "")
        #expect(json["overrides"]?.pointer == "/overrides")
        #expect(json["overrides"]?[0]?.pointer == "/overrides/0")
        #expect(json["overrides"]?[0]?["apps"]?[0]?.pointer == "/overrides/0/apps/0")
        #expect(json["x"]?["y"]?.pointer == "/x/y")
    }

    @Test func pointersEscapeTildeAndSlash() throws {
        let json = try #require(Support.json(#"{"a/b": {"m~n": {"~1/": 1}}, "": 2}"#))
        let inner = try #require(json["a/b"]?["m~n"]?["~1/"])
        #expect(inner.pointer == "/a~1b/m~0n/~01~1")
        #expect(json.value(at: "/a~1b/m~0n/~01~1") == inner)
        #expect(json[""]?.pointer == "/")
        #expect(json.value(at: "/")?.value == .number(PositionedJSON.Number(text: "2")))
    }

    @Test func pathsShareTheirParentsAndSpellPointers() throws {
        let json = try #require(Support.json(#"{"a/b": [{"c~": 1}]}"#))
        let inner = try #require(json["a/b"]?[0]?["c~"])
        #expect(inner.path == .member(.element(.member(.root, "a/b"), 0), "c~"))
        #expect(inner.path.pointer == "/a~1b/0/c~0")
        #expect(inner.path.depth == 3)
        #expect(PositionedJSON.Path.root.appending("x").appending(2).description == "/x/2")
        #expect(PositionedJSON.Path.root.pointer.isEmpty)
    }

    @Test func resolvesPointers() throws {
        let json = try #require(Support.json(#"{"a": [10, {"b": true}]}"#))
        #expect(json.value(at: "") == json)
        #expect(json.value(at: "/a/1/b")?.value == .bool(true))
        #expect(json.value(at: "/a/2") == nil)
        #expect(json.value(at: "/a/01") == nil)
        #expect(json.value(at: "/a/-") == nil)
        #expect(json.value(at: "a") == nil)
        #expect(json.value(at: "/a/0/x") == nil)
    }

    @Test func pointerTokensRoundTrip() {
        for token in ["", "plain", "a/b", "m~n", "~0", "~1", "/~/~", "é/🙂"] {
            let pointer = PositionedJSON.pointer("", appending: token)
            #expect(PositionedJSON.unescapePointerToken(String(pointer.dropFirst())) == token)
        }
        #expect(PositionedJSON.pointer("/a", appending: 3) == "/a/3")
    }

    @Test func decodesEscapes() {
        let text = #"["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20AC", "\ud83d\ude00", "\u0000"]"#
        let json = Support.json(text)
        #expect(json?[0]?.value == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(json?[1]?.value == .string("Aé€"))
        #expect(json?[2]?.value == .string("😀"))
        #expect(json?[3]?.value == .string("\u{0}"))
    }

    @Test func decodesRawUTF8() {
        #expect(Support.json("\"h\u{e9}llo \u{4e16}\u{754c} \u{1F600}\"")?.value == .string("héllo 世界 😀"))
    }

    @Test func numbersKeepTheirTextAndIntegerValue() {
        let cases: [(String, Bool, Int?)] = [
            ("0", true, 0), ("-0", true, 0), ("42", true, 42), ("-5", true, -5), ("1.0", true, 1), ("1.50", false, nil),
            ("2e3", true, 2000), ("25E-1", false, nil), ("250e-1", true, 25), ("0.000", true, 0), ("1e400", true, nil),
            ("9223372036854775807", true, Int.max), ("-9223372036854775808", true, Int.min),
            ("9223372036854775808", true, nil), ("1e-400", false, nil), ("0e99999999999999999999", true, 0),
        ]
        for (text, isInteger, value) in cases {
            let number = Support.json(text).flatMap { json -> PositionedJSON.Number? in
                if case .number(let number) = json.value { return number }
                return nil
            }
            #expect(number?.text == text)
            #expect(number?.isInteger == isInteger, "\(text)")
            #expect(number?.integerValue == value, "\(text)")
        }
        #expect(PositionedJSON.Number(text: "1.5").doubleValue == 1.5)
    }

    @Test func describesValuesForMessages() throws {
        let json = try #require(Support.json(#"[null, true, 1.5, "a\"b\n", [], [1], {}]"#))
        let shown = (0..<7).map { json[$0]?.shortDescription ?? "" }
        #expect(shown == ["null", "true", "1.5", #""a\"b\n""#, "an empty array", "an array", "an object"])
        #expect(json[0]?.kindDescription == "null")
        #expect(json[6]?.kindDescription == "an object")
        #expect(
            PositionedJSON.quoted(String(repeating: "x", count: 70)) == "\"" + String(repeating: "x", count: 64) + "…\""
        )
        #expect(PositionedJSON.quoted("\u{1}") == #""\u0001""#)
    }
}

/// A test failure with a message.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
