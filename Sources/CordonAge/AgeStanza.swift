/// One recipient stanza of an age header: `-> TYPE ARG...` and a base64 body wrapped at 64
/// columns that always ends with a line shorter than 64 (possibly empty).
public struct AgeStanza: Equatable, Sendable {
    /// The first argument, the stanza's type (`X25519`, `scrypt`, …).
    public var type: String
    /// The arguments after the type.
    public var arguments: [String]
    /// The decoded body.
    public var body: [UInt8]

    /// A stanza of `type` with `arguments` and `body`.
    public init(type: String, arguments: [String], body: [UInt8]) {
        self.type = type
        self.arguments = arguments
        self.body = body
    }

    /// The stanza's encoding, ending with a line feed.
    public func encoded() -> [UInt8] {
        var output = Array("->".utf8)
        for argument in [type] + arguments {
            output.append(0x20)
            output += argument.utf8
        }
        output.append(0x0A)
        let text = AgeBase64.encode(body, padded: false)
        var start = 0
        // Full 64-column lines, then a final short line (empty when the body fills its lines).
        while text.count - start >= AgeHeader.columns {
            output += text[start..<(start + AgeHeader.columns)]
            output.append(0x0A)
            start += AgeHeader.columns
        }
        output += text[start...]
        output.append(0x0A)
        return output
    }

    /// True when `argument` is a valid stanza argument: one or more VCHAR (0x21–0x7E).
    static func isValidArgument(_ argument: some Collection<UInt8>) -> Bool {
        !argument.isEmpty && argument.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}
