/// The bytes a `VarlinkJSONEncoder` writes, and the containers still open in them.
///
/// Encoding streams: a container is opened when asked for and closed once its encoder's caller
/// moves on to a sibling or an ancestor, which is how every synthesized `Encodable` (and every
/// one in this project) uses containers. Going back to a closed container is refused.
final class JSONOutput {
    var bytes: [UInt8] = []
    /// Per open container, its closing byte and how many members it has so far.
    private var open: [(closer: UInt8, count: Int)] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    var depth: Int { open.count }

    /// Closes every container deeper than `depth`.
    func close(to depth: Int) {
        while open.count > depth { bytes.append(open.removeLast().closer) }
    }

    /// Opens a container at `depth`, closing deeper ones.
    func openContainer(at depth: Int, opener: UInt8, closer: UInt8) throws {
        try resume(at: depth)
        bytes.append(opener)
        open.append((closer, 0))
    }

    /// Makes the container at `depth - 1` current again, closing deeper ones.
    func resume(at depth: Int) throws {
        guard open.count >= depth else {
            throw EncodingError.invalidValue(
                depth,
                EncodingError.Context(codingPath: [], debugDescription: "a container was used after it was finished"))
        }
        close(to: depth)
    }

    /// Starts the next member of the container at `level` (its depth + 1): a comma when needed.
    func beginElement(level: Int) throws {
        try resume(at: level)
        if open[level - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[level - 1].count += 1
    }

    /// Starts member `key` of the object at `level`.
    func beginMember(_ key: String, level: Int) throws {
        try beginElement(level: level)
        write(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a string literal, escaped as JSON wants (slashes left alone).
    func write(_ string: String) { Self.appendString(string, to: &bytes) }

    func write(_ value: Bool) {
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    func writeNull() {
        bytes.append(contentsOf: Self.nullBytes)
    }

    func write<T: FixedWidthInteger>(_ value: T) { Self.appendInteger(value, to: &bytes) }

    func write(_ value: Double, path: @autoclosure () -> [any CodingKey]) throws {
        try Self.appendDouble(value, to: &bytes, path: path())
    }

    /// Appends `string` as a JSON string literal, escaped as JSON wants (slashes left alone).
    /// Eight bytes at a time while none needs escaping (a record's base64 or a long reason is
    /// copied with one test per word), then byte by byte.
    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var plainStart = 0
            var index = 0
            while index < utf8.count {
                if utf8.count - index >= 8, let base = utf8.baseAddress,
                    !mayNeedEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                {
                    index += 8
                    continue
                }
                let byte = utf8[index]
                if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
                    appendEscape(byte, to: &bytes)
                    plainStart = index + 1
                }
                index += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes of `word` may be below 0x20, a quote or a backslash: never
    /// false when one is (the "has a byte less than n" and "has a zero byte" tests of Bit Twiddling
    /// Hacks, exact for existence), possibly true when none is (the bytes are then looked at one
    /// by one). Byte order does not matter.
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- 0x20 &* ones) & ~word & highs
        let quote = word ^ (0x22 &* ones)
        let backslash = word ^ (0x5C &* ones)
        return control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs) != 0
    }

    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22, 0x5C: bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    /// Appends `value` in decimal.
    static func appendInteger<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            while magnitude > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if value < 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: buffer[index...])
        }
    }

    /// Appends a finite double (integral ones without a fraction); a non-finite one is an error
    /// naming `path`.
    static func appendDouble(_ value: Double, to bytes: inout [UInt8], path: @autoclosure () -> [any CodingKey]) throws
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: path(), debugDescription: "JSON has no \(value)"))
        }
        if value == value.rounded(), abs(value) < 1e15 {
            appendInteger(Int64(value), to: &bytes)
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    static let trueBytes = Array("true".utf8)
    static let falseBytes = Array("false".utf8)
    static let nullBytes = Array("null".utf8)
}
