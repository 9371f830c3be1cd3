import CordonProtocol
import Foundation

/// Reads one metadata object's fields, naming the JSON pointer of a missing or mistyped one.
struct TUFFields {
    let value: JSONValue
    let pointer: String
    let role: String

    init(_ value: JSONValue, at pointer: String, role: String) throws(TUFError) {
        guard case .object = value else {
            throw TUFError(.malformed, role: role, "\(pointer.isEmpty ? "/" : pointer) is not an object")
        }
        self.value = value
        self.pointer = pointer
        self.role = role
    }

    /// The member's JSON pointer (RFC 6901: `~` as `~0`, `/` as `~1`); made for every object
    /// read, so a key with neither is not copied through Foundation's replacement.
    func path(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
            return "\(pointer)/\(key)"
        }
        return "\(pointer)/\(key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1"))"
    }

    func missing(_ key: String, _ what: String) -> TUFError {
        TUFError(.malformed, role: role, "\(path(key)) is missing or not \(what)")
    }

    func object(_ key: String) throws(TUFError) -> TUFFields {
        guard let member = value[key] else { throw missing(key, "an object") }
        return try TUFFields(member, at: path(key), role: role)
    }

    func optionalObject(_ key: String) throws(TUFError) -> TUFFields? {
        guard let member = value[key], member != .null else { return nil }
        return try TUFFields(member, at: path(key), role: role)
    }

    func string(_ key: String) throws(TUFError) -> String {
        guard let text = value[key]?.stringValue else { throw missing(key, "a string") }
        return text
    }

    /// A string canonical JSON can write back: no control character (canonical JSON writes one raw,
    /// and a strict reader refuses a raw one, so a file holding one would not read back).
    func text(_ key: String) throws(TUFError) -> String {
        let text = try string(key)
        if let control = CanonicalJSON.firstControlCharacter(in: text) {
            throw TUFError(
                .malformed, role: role,
                "\(path(key)) holds a control character (\(CanonicalJSON.name(control))); it must be one line of text")
        }
        return text
    }

    func integer(_ key: String) throws(TUFError) -> Int {
        guard case .int(let number)? = value[key] else { throw missing(key, "an integer") }
        return number
    }

    func optionalInteger(_ key: String) throws(TUFError) -> Int? {
        guard let member = value[key] else { return nil }
        guard case .int(let number) = member else { throw missing(key, "an integer") }
        return number
    }

    func bool(_ key: String) throws(TUFError) -> Bool {
        guard case .bool(let flag)? = value[key] else { throw missing(key, "true or false") }
        return flag
    }

    func array(_ key: String) throws(TUFError) -> [JSONValue] {
        guard let elements = value[key]?.arrayValue else { throw missing(key, "an array") }
        return elements
    }

    func strings(_ key: String) throws(TUFError) -> [String] {
        var out: [String] = []
        for (index, element) in try array(key).enumerated() {
            guard let text = element.stringValue else {
                throw TUFError(.malformed, role: role, "\(path(key))/\(index) is not a string")
            }
            out.append(text)
        }
        return out
    }

    /// The members of the object, in sorted order (iteration order is then reproducible).
    var members: [(key: String, value: JSONValue)] {
        guard case .object(let members) = value else { return [] }
        return members.sorted { $0.key < $1.key }
    }

    /// A version: an integer of at least 1.
    func version(_ key: String = "version") throws(TUFError) -> Int {
        let number = try integer(key)
        guard number >= 1 else {
            throw TUFError(.malformed, role: role, "\(path(key)) is \(number), not a version (1 or more)")
        }
        return number
    }

    /// An expiry as TUF writes it, `2030-01-01T00:00:00Z`.
    func date(_ key: String) throws(TUFError) -> Date {
        let text = try string(key)
        guard let date = TUFDate.parse(text) else {
            throw TUFError(
                .malformed, role: role, "\(path(key)) is \"\(text)\", not a UTC time like 2030-01-01T00:00:00Z")
        }
        return date
    }

    /// Hex bytes.
    func hex(_ key: String) throws(TUFError) -> [UInt8] {
        let text = try string(key)
        guard let bytes = TUFHex.decode(text) else { throw TUFError(.malformed, role: role, "\(path(key)) is not hex") }
        return bytes
    }
}

/// TUF's times: `YYYY-MM-DDTHH:MM:SSZ`, UTC, whole seconds.
public enum TUFDate {
    /// The time `text` names, or nil when it is not of that form.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm), no calendar object needed.
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// `date` as TUF writes it.
    public static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let digits = String(year)
        let paddedYear = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(paddedYear)-\(two(month))-\(two(day))T\(two(rest / 3_600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }
}

/// Lower- or upper-case hex.
public enum TUFHex {
    /// The bytes `text` spells, or nil.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: return byte - 48
            case 97...102: return byte - 87
            case 65...70: return byte - 55
            default: return nil
            }
        }
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Lower-case hex of `bytes`.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
