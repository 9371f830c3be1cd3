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
