import CordonProtocol
import CordonSecrets
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `GetKey`'s reply, encoded from locked memory without intermediate copies, is the very frame
/// the ordinary encoder would have written.
@Suite struct SecretReplyTests {
    @Test(arguments: [1, 2, 3, 16, 31, 32, 33])
    func theKeyFrameIsTheOrdinaryReply(count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let key = SecureBytes(copying: bytes)
        let frame = SecretReply.key(key)
        let ordinary = ReplyEncoder(allocator: ByteBufferAllocator()).reply(
            GetKeyReply(key: Data(bytes).base64EncodedString()))
        #expect(frame == ordinary)
        #expect(frame.readableBytesView.last == 0, "NUL-terminated")
    }

    @Test func base64MatchesFoundationForEveryPadding() {
        for count in 0...12 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: 255 - $0 * 19) }
            var output = [UInt8](repeating: 0, count: Base64.encodedCount(count))
            let written = bytes.withUnsafeBytes { input in
                output.withUnsafeMutableBytes { Base64.encode(input, into: $0) }
            }
            #expect(written == output.count)
            #expect(String(decoding: output, as: UTF8.self) == Data(bytes).base64EncodedString(), "\(count) bytes")
        }
    }

    /// The text `Storage.Get` replies with: every padding, and a 1 KiB record of every byte value.
    @Test func base64StringMatchesFoundation() {
        for count in Array(0...12) + [1024] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 5) }
            let text = bytes.withUnsafeBytes { Base64.string($0) }
            #expect(text == Data(bytes).base64EncodedString(), "\(count) bytes")
            #expect(text.utf8.count == Base64.encodedCount(count))
        }
    }

    @Test func theZeroingAllocatorKeepsContentsWhenABufferGrows() {
        var buffer = SecretReply.zeroingAllocator.buffer(capacity: 4)
        let text = String(repeating: "grow past the first block ", count: 40)
        buffer.writeString(text)
        #expect(buffer.readString(length: buffer.readableBytes) == text)
        let copy = buffer
        buffer.writeString("x")  // copy-on-write through the allocator's copy
        #expect(copy.readableBytes == 0 && buffer.readableBytes == 1)
    }
}
