/// Standard base64 (RFC 4648, with padding), written into caller-provided memory: `GetKey`'s
/// reply (`SecretReply`) and `Storage.Get`'s value.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The encoded length of `count` bytes.
    static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Encodes `input` into the start of `output` (at least `encodedCount(input.count)` bytes);
    /// returns the number of bytes written.
    static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(output.count >= encodedCount(input.count), "no room for the base64 text")
        var written = 0
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let first = UInt32(input[index])
            let second = remaining > 1 ? UInt32(input[index + 1]) : 0
            let third = remaining > 2 ? UInt32(input[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            output[written] = alphabet[Int(group >> 18 & 0x3F)]
            output[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
            output[written + 2] = remaining > 1 ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "=")
            output[written + 3] = remaining > 2 ? alphabet[Int(group & 0x3F)] : UInt8(ascii: "=")
            written += 4
            index += 3
        }
        return written
    }

    /// `input` as base64 text, encoded straight into the string's storage: `Data`'s
    /// `base64EncodedString()` copied the bytes into a `Data` first and ran Foundation's encoder
    /// unspecialized (1.7% of the agent's samples per `Storage.Get` of 1 KiB, docs/PERFORMANCE.md,
    /// "Cross-module optimization").
    static func string(_ input: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedCount(input.count)) { output in
            encode(input, into: UnsafeMutableRawBufferPointer(output))
        }
    }
}
