import Crypto
import Foundation

/// The payload's STREAM construction (docs/ARCHITECTURE.md, "Modules", CordonAge): a 16-byte nonce, the
/// key HKDF-SHA-256(ikm: file key, salt: nonce, info: "payload"), then 64 KiB chunks sealed with
/// ChaCha20-Poly1305 under the nonce `11-byte big-endian counter || final flag`.
enum AgePayload {
    /// Plaintext bytes per chunk.
    static let chunkSize = 64 * 1024
    /// The Poly1305 tag each chunk carries.
    static let tagSize = 16
    /// Ciphertext bytes of a full chunk.
    static let sealedChunkSize = chunkSize + tagSize
    /// The payload nonce that precedes the chunks.
    static let nonceSize = 16
    /// The ChaCha20-Poly1305 nonce of a chunk.
    static let chunkNonceSize = 12
    /// The file key's size.
    static let fileKeySize = 16

    /// The cipher of the payload's chunks: key HKDF-SHA-256(file key, salt: nonce, "payload").
    static func cipher(fileKey: SymmetricKey, nonce: [UInt8]) -> ChunkCipher {
        ChunkCipher(
            key: HKDF<SHA256>.deriveKey(
                inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32))
    }

    /// The ChaCha20-Poly1305 nonce of chunk `counter`: 11 bytes of big-endian counter, then the
    /// final flag.
    static func chunkNonce(counter: UInt64, final: Bool) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: chunkNonceSize)
        for index in 0..<8 { bytes[10 - index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * index)) }
        bytes[11] = final ? 1 : 0
        return bytes
    }

    /// Seals `plaintext` (at most one chunk) as chunk `counter` into `scratch` (reused from chunk
    /// to chunk, so no buffer is allocated per chunk) and hands its ciphertext and tag to `emit`
    /// in one piece.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, cipher: ChunkCipher, counter: UInt64, final: Bool,
        scratch: inout [UInt8], emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        precondition(plaintext.count <= chunkSize)
        if scratch.count < sealedChunkSize { scratch = [UInt8](repeating: 0, count: sealedChunkSize) }
        let nonce = chunkNonce(counter: counter, final: final)
        let count = scratch.withUnsafeMutableBytes { sealed in
            nonce.withUnsafeBytes { cipher.seal(plaintext, nonce: $0, into: sealed) }
        }
        try withBytes(scratch) { (bytes) throws(AgeError) in try emit(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
    }

    /// Opens `sealed` as chunk `counter` into `scratch` (reused from chunk to chunk) and hands
    /// its plaintext to `emit`; false (and nothing emitted) when it does not authenticate.
    static func open(
        _ sealed: UnsafeRawBufferPointer, cipher: ChunkCipher, counter: UInt64, final: Bool,
        scratch: inout [UInt8], emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) -> Bool {
        guard sealed.count >= tagSize, sealed.count <= sealedChunkSize else { return false }
        if scratch.count < chunkSize { scratch = [UInt8](repeating: 0, count: chunkSize) }
        let nonce = chunkNonce(counter: counter, final: final)
        let count = scratch.withUnsafeMutableBytes { plaintext in
            nonce.withUnsafeBytes { cipher.open(sealed, nonce: $0, into: plaintext) }
        }
        guard let count else { return false }
        if count > 0 {
            try withBytes(scratch) { (bytes) throws(AgeError) in
                try emit(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
            }
        }
        return true
    }

    static func emitData(_ data: Data, _ emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        guard !data.isEmpty else { return }
        var failure: AgeError?
        data.withUnsafeBytes { bytes in
            do throws(AgeError) { try emit(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}
