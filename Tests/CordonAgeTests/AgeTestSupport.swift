import CZlib
import Crypto
import Foundation
import Testing

@testable import CordonAge

/// Helpers shared by the CordonAge suites.
enum AgeTestSupport {
    /// `Tests/CordonAgeTests/`, found from this file's path.
    static let suiteDirectory = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Deterministic pseudo-random bytes (xorshift), so failures reproduce.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        var output = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            output[index] = UInt8(truncatingIfNeeded: state)
        }
        return output
    }

    /// Inflates a zlib stream.
    static func inflate(_ compressed: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CocoaError(.coderReadCorrupt)
        }
        defer { inflateEnd(&stream) }
        var input = compressed
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output += target[..<(target.count - Int(stream.avail_out))]
                }
            } while status == Z_OK
        }
        guard status == Z_STREAM_END else { throw CocoaError(.coderReadCorrupt) }
        return output
    }

    /// Decrypts `file` feeding it in pieces of `pieces` sizes (cycled), returning what was
    /// emitted and the error that stopped it, if any.
    static func decrypt(
        _ file: [UInt8], identities: [any AgeIdentity], pieces: [Int] = [1 << 20]
    ) -> (output: [UInt8], error: AgeError?) {
        var decryptor = AgeDecryptor(identities: identities)
        var output: [UInt8] = []
        var offset = 0
        var index = 0
        do throws(AgeError) {
            while offset < file.count {
                let size = max(1, pieces[index % pieces.count])
                let end = min(file.count, offset + size)
                try withBytes(Array(file[offset..<end])) { (bytes) throws(AgeError) in
                    try decryptor.update(bytes) { output += $0 }
                }
                offset = end
                index += 1
            }
            try decryptor.finish { output += $0 }
            return (output, nil)
        } catch {
            return (output, error)
        }
    }

    /// Encrypts `plaintext` to `recipients`, feeding it in pieces of `pieces` sizes (cycled).
    static func encrypt(
        _ plaintext: [UInt8], recipients: [any AgeRecipient], pieces: [Int] = [1 << 20]
    ) throws -> [UInt8] {
        var encryptor = try AgeEncryptor(recipients: recipients)
        var output: [UInt8] = []
        var offset = 0
        var index = 0
        while offset < plaintext.count {
            let end = min(plaintext.count, offset + max(1, pieces[index % pieces.count]))
            output += try encryptor.update(Array(plaintext[offset..<end]))
            offset = end
            index += 1
        }
        output += try encryptor.finish()
        return output
    }
}
