import CordonSecrets
import Glibc
@_spi(CustomByteBufferAllocator) import NIOCore

/// Replies that carry key material (`GetKey`): encoded from locked memory straight into the
/// frame written to the socket, with no `Data`, `String` or JSON-encoder copy on the way, in a
/// buffer whose memory is zeroed when it is freed (once the socket has taken the bytes).
///
/// Everything else the agent sends goes through `ReplyEncoder`; a reply with a secret in it
/// comes from here.
enum SecretReply {
    /// `{"parameters":{"key":"BASE64"}}` and its NUL, the base64 written from `key` in place.
    static func key(_ key: SecureBytes) -> ByteBuffer {
        let prefix = #"{"parameters":{"key":""#
        let suffix = #""}}"#
        let encoded = Base64.encodedCount(key.count)
        var buffer = zeroingAllocator.buffer(capacity: prefix.utf8.count + encoded + suffix.utf8.count + 1)
        buffer.writeString(prefix)
        key.withUnsafeBytes { bytes in
            _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: encoded) { output in
                Base64.encode(bytes, into: output)
            }
        }
        buffer.writeString(suffix)
        buffer.writeInteger(UInt8(0))
        return buffer
    }

    /// Allocates like `malloc`, but each block remembers its size (in a 16-byte header, which
    /// keeps malloc's alignment) so it can be zeroed before it is freed or moved.
    static let zeroingAllocator = ByteBufferAllocator(
        allocate: { size in
            guard let base = malloc(size + 16) else { return nil }
            base.storeBytes(of: size, as: Int.self)
            return base + 16
        },
        reallocate: { pointer, _, newSize in
            guard let pointer else {
                guard let base = malloc(newSize + 16) else { return nil }
                base.storeBytes(of: newSize, as: Int.self)
                return base + 16
            }
            let oldBase = pointer - 16
            let oldSize = oldBase.load(as: Int.self)
            guard let base = malloc(newSize + 16) else { return nil }
            base.storeBytes(of: newSize, as: Int.self)
            memcpy(base + 16, pointer, min(oldSize, newSize))
            explicit_bzero(oldBase, oldSize + 16)
            free(oldBase)
            return base + 16
        },
        deallocate: { pointer in
            let base = pointer - 16
            explicit_bzero(base, base.load(as: Int.self) + 16)
            free(base)
        },
        copy: { destination, source, count in
            destination.copyMemory(from: source, byteCount: count)
        })
}

/// Standard base64 (RFC 4648, with padding), written into caller-provided memory.
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
