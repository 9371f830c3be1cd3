@testable import CordonPolicy

/// A JSON value without positions, generated at random and rendered to text in varied ways, for
/// round-trip tests of the positioned parser.
indirect enum TestJSON: Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([TestJSON])
    case object([Member])

    struct Member: Equatable {
        var key: String
        var value: TestJSON
    }

    /// The value of a parsed document, positions dropped.
    init(_ json: PositionedJSON) {
        switch json.value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number.text)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(TestJSON.init))
        case .object(let members): self = .object(members.map { Member(key: $0.key, value: TestJSON($0.value)) })
        }
    }

    static let numbers = ["0", "-0", "12", "-7", "1.5", "2e3", "1E-2", "-0.25e+1", "123456789012345678901234"]
    static let scalars: [Unicode.Scalar] = [
        "a", "b", "~", "/", "\"", "\\", "\u{0}", "\n", "\t", "é", "😀", "\u{7F}", " ", "0",
    ]

    /// A random value at most five levels deep.
    static func random(using random: inout SplitMix64, depth: Int) -> TestJSON {
        switch Int.random(in: 0..<(depth >= 4 ? 4 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(numbers[Int.random(in: 0..<numbers.count, using: &random)])
        case 3: return .string(randomString(using: &random))
        case 4, 5:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in Self.random(using: &random, depth: depth + 1) })
        default:
            var members: [Member] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let key = randomString(using: &random)
                if !members.contains(where: { $0.key == key }) {
                    members.append(Member(key: key, value: Self.random(using: &random, depth: depth + 1)))
                }
            }
            return .object(members)
        }
    }

    private static func randomString(using random: inout SplitMix64) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            text.unicodeScalars.append(scalars[Int.random(in: 0..<scalars.count, using: &random)])
        }
        return text
    }

    /// The value as JSON text, with random whitespace and random (valid) choices of escapes.
    func rendered(using random: inout SplitMix64) -> String {
        let space = Self.space(using: &random)
        switch self {
        case .null: return space + "null"
        case .bool(let flag): return space + (flag ? "true" : "false")
        case .number(let text): return space + text
        case .string(let text): return space + Self.quote(text, using: &random)
        case .array(let elements):
            var parts: [String] = []
            for element in elements { parts.append(element.rendered(using: &random) + Self.space(using: &random)) }
            return space + "[" + parts.joined(separator: ",") + Self.space(using: &random) + "]"
        case .object(let members):
            var parts: [String] = []
            for member in members {
                let key =
                    Self.space(using: &random) + Self.quote(member.key, using: &random) + Self.space(using: &random)
                parts.append(key + ":" + member.value.rendered(using: &random) + Self.space(using: &random))
            }
            return space + "{" + parts.joined(separator: ",") + Self.space(using: &random) + "}"
        }
    }

    private static func space(using random: inout SplitMix64) -> String {
        ["", "", " ", "\n", "\t", "\r\n", "  \n  "][Int.random(in: 0..<7, using: &random)]
    }

    private static func quote(_ text: String, using random: inout SplitMix64) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += Bool.random(using: &random) ? "\\n" : "\\u000a"
            case "\t": result += "\\t"
            case "/" where Bool.random(using: &random): result += "\\/"
            case _ where scalar.value < 0x20 || Bool.random(using: &random): result += unicodeEscape(scalar)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        func unit(_ value: UInt32) -> String { "\\u" + PositionedJSON.hex(value, width: 4) }
        guard scalar.value > 0xFFFF else { return unit(scalar.value) }
        let offset = scalar.value - 0x10000
        return unit(0xD800 + (offset >> 10)) + unit(0xDC00 + (offset & 0x3FF)).lowercased()
    }

    /// Whether a value of this kind starts with `scalar`.
    static func canStart(_ value: PositionedJSON.Value, with scalar: Unicode.Scalar) -> Bool {
        switch value {
        case .null: return scalar == "n"
        case .bool(let flag): return scalar == (flag ? "t" : "f")
        case .number: return scalar == "-" || ("0"..."9").contains(scalar)
        case .string: return scalar == "\""
        case .array: return scalar == "["
        case .object: return scalar == "{"
        }
    }
}
