import CordonProtocol
import NIOCore

/// Splits a byte stream into varlink messages at each NUL byte, refusing oversized ones.
///
/// Emits each message (without its NUL) as a `ByteBuffer`. A message longer than the limit
/// throws `VarlinkFrameError.messageTooLarge` before it is buffered further, so a client
/// cannot make the agent hold more than `maxMessageBytes` for it.
public struct VarlinkFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public var maxMessageBytes: Int { splitter.maxMessageBytes }
    /// Where the next message ends (`CordonProtocol`'s pure splitting logic).
    private var splitter: VarlinkFrameSplitter

    public init(maxMessageBytes: Int) {
        splitter = VarlinkFrameSplitter(maxMessageBytes: maxMessageBytes)
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        switch splitter.scan(buffer.readableBytesView) {
        case .needMoreData:
            return .needMoreData
        case .tooLarge:
            throw VarlinkFrameError.messageTooLarge(limit: maxMessageBytes)
        case .message(let length):
            // Both reads are within the readable bytes just inspected.
            guard let message = buffer.readSlice(length: length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(Self.wrapInboundOut(message))
            return .continue
        }
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
    public func varlinkFrame(_ message: [UInt8]) -> ByteBuffer {
        var buffer = self.buffer(capacity: message.count + 1)
        buffer.writeBytes(message)
        buffer.writeInteger(UInt8(0))
        return buffer
    }

    /// A buffer holding `message` followed by the NUL terminator.
    public func varlinkFrame(_ message: some Collection<UInt8>) -> ByteBuffer {
        var buffer = self.buffer(capacity: message.count + 1)
        buffer.writeBytes(message)
        buffer.writeInteger(UInt8(0))
        return buffer
    }
}
