/// Finds varlink messages in buffered bytes: each message ends at a NUL byte, and none may be
/// longer than a limit.
///
/// The pure core of the transport's frame decoder, with no I/O: give it the bytes buffered so
/// far (starting at the first unread byte) and it says where the next message ends, that more
/// bytes are needed, or that the message being received is over the limit. It remembers how many
/// bytes it has already searched, so a message arriving in many small reads is scanned once.
/// A message longer than `maxMessageBytes` is reported as soon as more than that many bytes of
/// it are buffered, so a peer cannot make the receiver hold more than the limit for it.
public struct VarlinkFrameSplitter: Sendable {
    /// What the buffered bytes hold next.
    public enum Scan: Sendable, Equatable {
        /// A complete message: the first `length` bytes; the NUL that ends it follows them.
        case message(length: Int)
        /// No NUL yet, and what is buffered is within the limit.
        case needMoreData
        /// The message being received is longer than the limit.
        case tooLarge
    }

    /// The largest message accepted, in bytes (excluding the NUL).
    public let maxMessageBytes: Int
    /// Bytes already searched for a NUL, so partial messages are not rescanned.
    @usableFromInline var scanned = 0

    /// A splitter that refuses messages longer than `maxMessageBytes`.
    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Looks for the next message in `bytes`, the buffered bytes from the first unread one.
    ///
    /// After `.message(length:)` the caller consumes `length + 1` bytes (the message and its NUL)
    /// before the next call; after `.needMoreData` it calls again with the same bytes plus
    /// whatever arrived since.
    @inlinable
    public mutating func scan<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Scan where Bytes.Index == Int {
        let start = bytes.startIndex + min(scanned, bytes.count)
        guard let nul = bytes[start...].firstIndex(of: 0) else {
            scanned = bytes.count
            return bytes.count > maxMessageBytes ? .tooLarge : .needMoreData
        }
        let length = nul - bytes.startIndex
        scanned = 0
        return length > maxMessageBytes ? .tooLarge : .message(length: length)
    }
}
