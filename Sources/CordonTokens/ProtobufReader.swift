/// A minimal protocol-buffers wire-format reader: varints, 64- and 32-bit fields and length-delimited
/// fields, unknown fields skipped, malformed input refused with the byte offset (offsets count from
/// the start of the outermost message).
public struct ProtobufReader {
    /// A field's wire value.
    public enum Value: Equatable {
        case varint(UInt64)
        case fixed64(UInt64)
        case lengthDelimited(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int

    /// Reads `bytes` (a slice keeps the offsets of the outer message).
    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    /// The offset of the next field.
    public var offset: Int { position }

    /// The next field number and value, or nil at the end of the message.
    public mutating func next() throws(TokenFormatError) -> (field: UInt64, value: Value, offset: Int)? {
        guard position < bytes.endIndex else { return nil }
        let start = position
        let key = try varint()
        let field = key >> 3
        if field == 0 { throw .malformed(format: "protobuf", offset: start, reason: "field number 0") }
        switch key & 7 {
        case 0: return (field, .varint(try varint()), start)
        case 1: return (field, .fixed64(UInt64(littleEndian: try fixed(8))), start)
        case 2:
            let lengthOffset = position
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - position) else {
                throw .malformed(
                    format: "protobuf", offset: lengthOffset, reason: "length \(length) runs past the end")
            }
            let value = bytes[position..<position + Int(length)]
            position += Int(length)
            return (field, .lengthDelimited(value), start)
        case 5: return (field, .fixed32(UInt32(truncatingIfNeeded: try fixed(4))), start)
        case let wireType:
            throw .malformed(format: "protobuf", offset: start, reason: "wire type \(wireType) is not supported")
        }
    }

    private mutating func varint() throws(TokenFormatError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.endIndex else {
                throw .malformed(format: "protobuf", offset: start, reason: "truncated varint")
            }
            let byte = bytes[position]
            position += 1
            if shift == 63, byte > 1 {
                throw .malformed(format: "protobuf", offset: start, reason: "varint longer than 64 bits")
            }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    private mutating func fixed(_ count: Int) throws(TokenFormatError) -> UInt64 {
        guard bytes.endIndex - position >= count else {
            throw .malformed(format: "protobuf", offset: position, reason: "truncated \(count * 8)-bit field")
        }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += count
        return value
    }
}
