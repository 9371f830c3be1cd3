import NIOCore

/// Splits a byte stream into varlink messages at each NUL byte, refusing oversized ones.
///
/// Emits each message (without its NUL) as a `ByteBuffer`. A message longer than the limit
/// throws `VarlinkFrameError.messageTooLarge` before it is buffered further, so a client
/// cannot make the agent hold more than `maxMessageBytes` for it.
public struct VarlinkFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public let maxMessageBytes: Int
    /// Bytes already searched for a NUL, so partial messages are not rescanned.
    private var scanned = 0

    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        let start = view.startIndex + scanned
        guard let nul = view[start...].firstIndex(of: 0) else {
            scanned = view.count
            if view.count > maxMessageBytes { throw VarlinkFrameError.messageTooLarge(limit: maxMessageBytes) }
            return .needMoreData
        }
        let length = nul - view.startIndex
        scanned = 0
        if length > maxMessageBytes { throw VarlinkFrameError.messageTooLarge(limit: maxMessageBytes) }
        // Both reads are within the readable bytes just inspected.
        guard let message = buffer.readSlice(length: length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(message))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A trailing message without its NUL is incomplete: drop it.
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}

/// Framing failures.
public enum VarlinkFrameError: Error, Sendable, Equatable {
    /// A message exceeded the size limit.
    case messageTooLarge(limit: Int)
}

extension ByteBufferAllocator {
    /// A buffer holding `message` followed by the NUL terminator.
    public func varlinkFrame(_ message: some Collection<UInt8>) -> ByteBuffer {
        var buffer = self.buffer(capacity: message.count + 1)
        buffer.writeBytes(message)
        buffer.writeInteger(UInt8(0))
        return buffer
    }
}
