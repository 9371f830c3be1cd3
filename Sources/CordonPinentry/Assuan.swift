/// The pure part of the Assuan protocol (as spoken by pinentry): escaping commands, parsing responses.
///
/// Assuan is line based: a client sends `COMMAND [argument]\n`, the server answers with `OK`,
/// `ERR <code> <text>`, `D <data>`, `S <keyword> <text>`, `#` comments, `INQUIRE <keyword>` or
/// `END`. In arguments and data, `%`, CR and LF are written as `%25`, `%0D` and `%0A`. No I/O here:
/// the functions work on bytes so that a caller can keep secrets in buffers it zeroes itself.
public enum Assuan {
    /// The longest line the protocol allows, in bytes, including the newline.
    public static let maxLineLength = 1000

    /// The gpg-error code for "Operation cancelled" (`GPG_ERR_CANCELED`) as pinentry reports it.
    public static let cancelledCode: UInt32 = 83_886_179

    /// One response line from the server.
    public enum Response: Equatable, Sendable {
        /// `OK [text]`: the command succeeded.
        case ok(String)
        /// `ERR <code> [text]`: the command failed.
        case error(code: UInt32, message: String)
        /// `D <data>`: data; decode the raw line with `decodeData(line:into:)` (it may hold a secret).
        case data
        /// `S <keyword> [text]`: a status line.
        case status(keyword: String, text: String)
        /// `INQUIRE <keyword> [text]`: the server asks the client for data (answer `CAN` to refuse).
        case inquire(keyword: String, text: String)
        /// `# …`: a comment, to be ignored.
        case comment
        /// `END`: the end of data sent with `D` lines.
        case end
    }

    /// A malformed line from the server.
    public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
        /// What is wrong with the line.
        public var reason: String

        /// An error with `reason`.
        public init(_ reason: String) { self.reason = reason }

        /// The reason.
        public var description: String { reason }
    }

    /// Whether an `ERR` code means the user cancelled (`GPG_ERR_CANCELED` or `GPG_ERR_FULLY_CANCELED`,
    /// from any error source).
    public static func isCancellation(_ code: UInt32) -> Bool {
        let errorCode = code & 0xFFFF
        return errorCode == 99 || errorCode == 198
    }

    /// `text` with `%`, CR and LF percent-escaped, as Assuan arguments require.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The line for `command` with its (escaped) `argument`, ending in a newline.
    public static func command(_ command: String, _ argument: String? = nil) -> String {
        guard let argument else { return command + "\n" }
        return command + " " + escape(argument) + "\n"
    }

    /// Parses one response `line` (without its newline; a trailing CR is ignored).
    public static func parse<Line: BidirectionalCollection>(_ line: Line) throws(ProtocolError) -> Response
    where Line.Element == UInt8 {
        let bytes = Array(line.prefix(16))
        if bytes.first == UInt8(ascii: "#") { return .comment }
        if bytes.starts(with: [UInt8(ascii: "D")]) && (bytes.count == 1 || bytes[1] == UInt8(ascii: " ")) {
            return .data
        }
        let text = try Self.text(of: line)
        let (verb, rest) = split(text)
        switch verb {
        case "OK": return .ok(rest)
        case "END": return .end
        case "ERR":
            let (code, message) = split(rest)
            guard let number = UInt32(code) else { throw ProtocolError("ERR without a numeric code: \(text)") }
            return .error(code: number, message: message)
        case "S":
            let (keyword, detail) = split(rest)
            return .status(keyword: keyword, text: detail)
        case "INQUIRE":
            let (keyword, detail) = split(rest)
            return .inquire(keyword: keyword, text: detail)
        default:
            throw ProtocolError("unexpected response '\(verb.prefix(40))'")
        }
    }

    /// Percent-decodes the payload of a `D` line (`line` includes the leading `D `), passing each
    /// decoded byte to `sink`, so the caller chooses where the (possibly secret) bytes go.
    public static func decodeData<Line: BidirectionalCollection>(
        line: Line, into sink: (UInt8) -> Void
    ) throws(ProtocolError) where Line.Element == UInt8 {
        var payload = line.dropFirst(2)
        if payload.last == 13 { payload = payload.dropLast() }
        var index = payload.startIndex
        while index != payload.endIndex {
            let byte = payload[index]
            index = payload.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                sink(byte)
                continue
            }
            guard index != payload.endIndex, let high = hexValue(payload[index]) else {
                throw ProtocolError("a bad percent escape in a D line")
            }
            index = payload.index(after: index)
            guard index != payload.endIndex, let low = hexValue(payload[index]) else {
                throw ProtocolError("a bad percent escape in a D line")
            }
            index = payload.index(after: index)
            sink(high << 4 | low)
        }
    }

    /// The line as text, percent escapes decoded, a trailing CR dropped.
    private static func text<Line: BidirectionalCollection>(of line: Line) throws(ProtocolError) -> String
    where Line.Element == UInt8 {
        var bytes: [UInt8] = []
        try decodeData(line: [UInt8(ascii: "D"), UInt8(ascii: " ")] + Array(line)) { bytes.append($0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first space-separated word and the rest (without the separating spaces).
    private static func split(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(of: " ") else { return (text, "") }
        let rest = text[space...].drop { $0 == " " }
        return (String(text[..<space]), String(rest))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
