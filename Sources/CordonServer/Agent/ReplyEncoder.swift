import CordonProtocol
import Foundation
import NIOCore

/// Encodes replies straight into NUL-terminated frames.
struct ReplyEncoder {
    let allocator: ByteBufferAllocator
    private let codec = VarlinkCodec()

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
    }

    /// A reply frame with `parameters`.
    func reply<P: Codable & Sendable>(_ parameters: P, continues: Bool = false) -> ByteBuffer {
        do {
            return allocator.varlinkFrame(
                try codec.encodeBytes(VarlinkReply(parameters: parameters, continues: continues)))
        } catch {
            return self.error(CordonError.internalError(reason: "a reply could not be encoded").varlinkError)
        }
    }

    /// A reply frame with parameters that write themselves (the most frequent replies).
    func reply<P: Codable & Sendable & JSONWritable>(_ parameters: P, continues: Bool = false) -> ByteBuffer {
        do {
            return allocator.varlinkFrame(
                try VarlinkJSONEncoder().encode(writing: VarlinkReply(parameters: parameters, continues: continues)))
        } catch {
            return self.error(CordonError.internalError(reason: "a reply could not be encoded").varlinkError)
        }
    }

    /// An empty reply frame (`{"parameters":{}}`).
    func empty() -> ByteBuffer {
        allocator.varlinkFrame(Self.emptyReply)
    }

    /// An error reply frame.
    func error(_ error: VarlinkError) -> ByteBuffer {
        allocator.varlinkFrame(codec.encodeErrorBytes(error))
    }

    static let emptyReply = Array("{\"parameters\":{}}".utf8)
}
