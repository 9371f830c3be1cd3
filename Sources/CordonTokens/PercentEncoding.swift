/// Percent-decoding and -encoding for URI components (RFC 3986), strict about malformed escapes.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (and, when `plusIsSpace`, `+` as a space); the result must be UTF-8.
    public static func decode(_ text: Substring, field: String, plusIsSpace: Bool = false) throws(TokenFormatError)
        -> String
    {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else {
                    throw .invalidField(field: field, reason: "malformed percent escape at character \(index + 1)")
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let string = String(validating: output, as: UTF8.self) else {
            throw .invalidField(field: field, reason: "it is not UTF-8 after percent-decoding")
        }
        return string
    }

    /// Encodes everything but the RFC 3986 unreserved characters.
    public static func encode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                output.unicodeScalars.append("%")
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0xf)])
            }
        }
        return output
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Splits a query (`a=1&b=2`) into decoded pairs; a name given twice is refused.
    public static func queryItems(
        _ query: Substring, context: String, plusIsSpace: Bool
    ) throws(TokenFormatError) -> [String: String] {
        var items: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0], field: context).lowercased()
            let value = parts.count > 1 ? try decode(parts[1], field: name, plusIsSpace: plusIsSpace) : ""
            if items[name] != nil { throw .invalidField(field: name, reason: "it is given more than once") }
            items[name] = value
        }
        return items
    }
}
