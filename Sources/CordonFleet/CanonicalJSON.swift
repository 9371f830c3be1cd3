import CordonProtocol

/// The canonical JSON TUF signs (the OLPC form securesystemslib writes): members sorted by code
/// point, no whitespace, strings escaped only at `"` and `\`, integers only.
public enum CanonicalJSON {
    /// The largest document parsed: metadata caps are smaller, this bounds a caller that passes more.
    static let maximumDepth = 32

    /// Parses `bytes` as one JSON value, strictly (CordonProtocol's `JSONNodeParser`: RFC 8259, one
    /// pass, bounded depth, a member named twice refused — two readers must never see different
    /// documents), integers kept exact.
    public static func parse(_ bytes: [UInt8], role: String) throws(TUFError) -> JSONValue {
        do {
            return value(try JSONNodeParser.parse(bytes))
        } catch {
            throw TUFError(.malformed, role: role, "not JSON: \(error)")
        }
    }

    private static func value(_ node: JSONNode) -> JSONValue {
        switch node {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .int(Int(number))
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .array(let elements): .array(elements.map(value))
        case .object(let members):
            .object(Dictionary(members.map { ($0.key, value($0.value)) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// The canonical bytes of `value`; a fraction, or nesting deeper than 32, is refused.
    public static func encode(_ value: JSONValue, role: String) throws(TUFError) -> [UInt8] {
        var out: [UInt8] = []
        try append(value, to: &out, depth: 0, role: role)
        return out
    }

    private static func append(_ value: JSONValue, to out: inout [UInt8], depth: Int, role: String) throws(TUFError) {
        guard depth < maximumDepth else { throw TUFError(.malformed, role: role, "nested deeper than \(maximumDepth)") }
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .int(let number): out += Array(String(number).utf8)
        case .double(let number):
            guard let whole = Int(exactly: number) else {
                throw TUFError(.malformed, role: role, "a number that is not an integer (\(number))")
            }
            out += Array(String(whole).utf8)
        case .string(let text): appendString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try append(element, to: &out, depth: depth + 1, role: role)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // By code point: UTF-8's byte order is code-point order, and comparing the bytes
            // allocates nothing (the swarm signs and verifies thousands of these a second).
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                try append(members[key] ?? .null, to: &out, depth: depth + 1, role: role)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
