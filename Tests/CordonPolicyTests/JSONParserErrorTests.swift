import Testing

@testable import CordonPolicy

@Suite("Positioned JSON: syntax errors and limits")
struct JSONParserErrorTests {
    typealias Support = ParserTestSupport

    /// One malformed text and the error it must give.
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var kind: PositionedJSONError.Kind
        var line: Int
        var column: Int
        var pointer: String
        var message: String
        var testDescription: String { text.debugDescription }
    }

    static let cases: [Case] = [
        Case(
            text: "", kind: .unexpectedEnd, line: 1, column: 1, pointer: "",
            message: "expected a value, got the end of the document"),
        Case(
            text: "{\"a\": 1,}", kind: .unexpectedCharacter, line: 1, column: 9, pointer: "",
            message: "expected a string key after ',', got '}' (trailing commas are not allowed)"),
        Case(
            text: "[1,\n 2,\n]", kind: .unexpectedCharacter, line: 3, column: 1, pointer: "",
            message: "expected a value after ',', got ']' (trailing commas are not allowed)"),
        Case(
            text: "{\"a\": 1 \"b\": 2}", kind: .unexpectedCharacter, line: 1, column: 9, pointer: "",
            message: "expected ',' or '}' after a member, got '\"'"),
        Case(
            text: "[1 2]", kind: .unexpectedCharacter, line: 1, column: 4, pointer: "",
            message: "expected ',' or ']' after an array element, got '2'"),
        Case(
            text: "{\"a\" 1}", kind: .unexpectedCharacter, line: 1, column: 6, pointer: "/a",
            message: "expected ':' after the key \"a\", got '1'"),
        Case(
            text: "{1: 2}", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "",
            message: "expected a string key or '}', got '1'"),
        Case(
            text: "{'a': 1}", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "",
            message: "expected a string key or '}', got \"'\" (JSON strings and keys take double quotes)"),
        Case(
            text: "[1, // one\n2]", kind: .unexpectedCharacter, line: 1, column: 5, pointer: "/1",
            message: "expected a value, got '/' (JSON has no comments)"),
        Case(
            text: "{\"a\": [1, {\"b\": }]}", kind: .unexpectedCharacter, line: 1, column: 17, pointer: "/a/1/b",
            message: "expected a value, got '}'"),
        Case(
            text: "{\"a\": \"abc", kind: .unterminatedString, line: 1, column: 7, pointer: "/a",
            message: "unterminated string; expected a closing '\"' before the end of the document"),
        Case(
            text: "{\"a\": \"abc\n\"}", kind: .unterminatedString, line: 1, column: 7, pointer: "/a",
            message: "unterminated string; expected a closing '\"' before the end of the line"),
        Case(
            text: "[\"a\\", kind: .unterminatedString, line: 1, column: 5, pointer: "/0",
            message: "unterminated string; expected an escape after '\\'"),
        Case(
            text: "[\"tab\there\"]", kind: .controlCharacter, line: 1, column: 6, pointer: "/0",
            message: "unescaped control character U+0009 in a string; write it as an escape (\\t, \\u00XX)"),
        Case(
            text: "[\"\\x41\"]", kind: .invalidEscape, line: 1, column: 3, pointer: "/0",
            message: "invalid escape '\\x' in a string; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"),
        Case(
            text: "[\"\\u12G4\"]", kind: .invalidEscape, line: 1, column: 3, pointer: "/0",
            message: "invalid \\u escape; expected exactly 4 hexadecimal digits after \\u"),
        Case(
            text: "[\"\\ud83d\"]", kind: .invalidEscape, line: 1, column: 3, pointer: "/0",
            message: "unpaired surrogate \\uD83D; expected a low surrogate \\uDC00-\\uDFFF after it"),
        Case(
            text: "[\"\\ud83d\\u0041\"]", kind: .invalidEscape, line: 1, column: 3, pointer: "/0",
            message: "unpaired surrogate \\uD83D; expected a low surrogate \\uDC00-\\uDFFF after it"),
        Case(
            text: "[\"\\ude00\"]", kind: .invalidEscape, line: 1, column: 3, pointer: "/0",
            message: "unpaired surrogate \\uDE00; a low surrogate must follow a high surrogate"),
        Case(
            text: "[01]", kind: .invalidNumber, line: 1, column: 3, pointer: "/0",
            message: "invalid number; leading zeros are not allowed"),
        Case(
            text: "[-]", kind: .invalidNumber, line: 1, column: 3, pointer: "/0",
            message: "invalid number; expected a digit after '-', got ']'"),
        Case(
            text: "[1.]", kind: .invalidNumber, line: 1, column: 4, pointer: "/0",
            message: "invalid number; expected a digit after '.', got ']'"),
        Case(
            text: "[1e+]", kind: .invalidNumber, line: 1, column: 5, pointer: "/0",
            message: "invalid number; expected a digit in the exponent, got ']'"),
        Case(
            text: "[.5]", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got '.'"),
        Case(
            text: "[+1]", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got '+'"),
        Case(
            text: "[NaN]", kind: .invalidLiteral, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got 'NaN'; the literals are true, false and null (lower case, unquoted)"),
        Case(
            text: "{\"a\": tru}", kind: .invalidLiteral, line: 1, column: 7, pointer: "/a",
            message: "expected a value, got 'tru'; the literals are true, false and null (lower case, unquoted)"),
        Case(
            text: "[nullx]", kind: .invalidLiteral, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got 'nullx'; the literals are true, false and null (lower case, unquoted)"),
        Case(
            text: "{\"a\": 1, \"b\": 2,\n \"a\": 3}", kind: .duplicateKey, line: 2, column: 2, pointer: "/a",
            message: "duplicate key \"a\" (first at line 1, column 2)"),
        Case(
            text: "{} {}", kind: .trailingContent, line: 1, column: 4, pointer: "",
            message: "expected the end of the document after the top-level value, got '{'"),
        Case(
            text: "\u{FEFF}{}", kind: .byteOrderMark, line: 1, column: 1, pointer: "",
            message: "a byte order mark is not allowed; save the file as UTF-8 without BOM"),
        Case(
            text: "[\u{1}]", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got U+0001"),
        Case(
            text: "[é]", kind: .unexpectedCharacter, line: 1, column: 2, pointer: "/0",
            message: "expected a value, got 'é' (U+00E9)"),
    ]

    @Test(arguments: cases)
    func reportsWhereAndWhat(_ testCase: Case) {
        let error = Support.jsonError(testCase.text)
        #expect(error?.kind == testCase.kind)
        #expect(error?.message == testCase.message)
        #expect(error?.line == testCase.line)
        #expect(error?.column == testCase.column)
        #expect(error?.pointer == testCase.pointer)
    }

    @Test func everyErrorKindIsCovered() {
        let covered = Set(Self.cases.map(\.kind)).union([.invalidUTF8, .tooDeep, .tooLarge])
        #expect(covered == Set(PositionedJSONError.Kind.allCases))
    }

    @Test func describesItselfWithThePosition() {
        let error = PositionedJSONError(kind: .unexpectedEnd, line: 3, column: 7, pointer: "/a", message: "boom")
        #expect(error.description == "3:7: boom")
    }

    @Test(
        arguments: [
            [0x5B, 0x22, 0xFF, 0x22, 0x5D],  // a byte that is never UTF-8
            [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D],  // an overlong '/'
            [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D],  // an encoded surrogate
            [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D],  // above U+10FFFF
            [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D],  // a truncated sequence
            [0x5B, 0x22, 0x80, 0x22, 0x5D],  // a lone continuation byte
        ] as [[UInt8]])
    func rejectsIllFormedUTF8InStrings(_ bytes: [UInt8]) {
        let error = Support.jsonError(bytes)
        #expect(error?.kind == .invalidUTF8)
        #expect(error?.line == 1)
        #expect(error?.column == 3)
        #expect(error?.message.hasPrefix("invalid UTF-8: the byte 0x") == true)
    }

    @Test func rejectsIllFormedUTF8OutsideStrings() {
        let error = Support.jsonError([0x5B, 0xFF, 0x5D])
        #expect(error?.kind == .unexpectedCharacter)
        #expect(error?.message == "expected a value, got the byte 0xFF, which is not valid UTF-8")
    }

    @Test func nestingUpToTheLimitIsFine() {
        let text = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(Support.json(text) != nil)
        let objects = String(repeating: "{\"a\":", count: 63) + "[]" + String(repeating: "}", count: 63)
        #expect(Support.json(objects) != nil)
    }

    @Test func nestingBeyondTheLimitIsAnError() {
        let text = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let error = Support.jsonError(text)
        #expect(error?.kind == .tooDeep)
        #expect(error?.column == 65)
        #expect(error?.pointer == "/" + Array(repeating: "0", count: 64).joined(separator: "/"))
        #expect(error?.message == "objects and arrays are nested deeper than 64 levels")
        let deep = String(repeating: "[", count: 100_000)
        #expect(Support.jsonError(deep)?.kind == .tooDeep)
    }

    @Test func theSizeLimitIsOneMebibyte() {
        let padding = [UInt8](repeating: 0x20, count: (1 << 20) - 2)
        #expect((try? PositionedJSONParser.parse([0x5B] + padding + [0x5D]).get()) != nil)
        let error = Support.jsonError([0x5B] + padding + [0x20, 0x5D])
        #expect(error?.kind == .tooLarge)
        #expect(error?.message == "the document is 1048577 bytes; at most 1048576 bytes are allowed")
        #expect(error?.line == 1 && error?.column == 1)
    }

    /// Pointers are shared with the parent, not copied into every element: a 300 KB key above an
    /// array of 300,000 elements would otherwise need 90 GB.
    @Test func aLongKeyAboveAWideArrayStaysCheap() throws {
        let key = String(repeating: "k", count: 300_000)
        let text = "{\"" + key + "\": [" + String(repeating: "0,", count: 299_999) + "0]}"
        let json = try #require(Support.json(text))
        let last = try #require(json[key]?[299_999])
        #expect(last.pointer.count == 300_000 + 8)
    }

    @Test func limitsCanBeLowered() {
        let limits = PositionedJSONParser.Limits(maxDepth: 2, maxBytes: 10)
        #expect(Support.jsonError(Array("[[[]]]".utf8), limits: limits)?.kind == .tooDeep)
        #expect(Support.jsonError(Array("[1,2,3,4,5,6]".utf8), limits: limits)?.kind == .tooLarge)
        #expect((try? PositionedJSONParser.parse(Array("[[]]".utf8), limits: limits).get()) != nil)
    }
}
