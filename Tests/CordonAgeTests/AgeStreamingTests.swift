import Crypto
import Testing

@testable import CordonAge

/// Constant memory: a 256 MiB stream goes through the encryptor and straight into the decryptor,
/// fed 64 KiB at a time as the file helpers feed them, and neither ever holds more than a chunk
/// (plus a byte) between calls, whatever the stream's length. Counted, not timed.
@Suite("CordonAge: streaming in constant memory")
struct AgeStreamingTests {
    @Test func twoHundredFiftySixMiBStreamHoldsAtMostOneChunk() throws {
        let identity = AgeX25519Identity.generate()
        var encryptor = try AgeEncryptor(recipients: [identity.recipient])
        var decryptor = AgeDecryptor(identities: [identity])
        var plainHash = SHA256()
        var outputHash = SHA256()
        var largestEncryptorBuffer = 0
        var largestDecryptorBuffer = 0
        var largestEmit = 0
        var outputBytes = 0
        let block = AgeTestSupport.bytes(64 * 1024 + 7, seed: 42)  // not chunk-aligned on purpose
        let total = 256 * 1024 * 1024
        var fed = 0

        func sink(_ ciphertext: UnsafeRawBufferPointer) throws(AgeError) {
            largestEmit = max(largestEmit, ciphertext.count)
            try decryptor.update(ciphertext) { plaintext in
                outputHash.update(bufferPointer: plaintext)
                outputBytes += plaintext.count
            }
            largestDecryptorBuffer = max(largestDecryptorBuffer, decryptor.bufferedByteCount)
        }
        while fed < total {
            let count = min(block.count, total - fed)
            try withBytes(block) { (bytes) throws(AgeError) in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[..<count])
                plainHash.update(bufferPointer: piece)
                try encryptor.update(piece, emit: sink)
            }
            largestEncryptorBuffer = max(largestEncryptorBuffer, encryptor.bufferedByteCount)
            fed += count
        }
        try encryptor.finish(emit: sink)
        try decryptor.finish { plaintext in
            outputHash.update(bufferPointer: plaintext)
            outputBytes += plaintext.count
        }
        #expect(outputBytes == total)
        #expect(Array(outputHash.finalize()) == Array(plainHash.finalize()))
        #expect(largestEncryptorBuffer <= AgePayload.chunkSize)
        #expect(largestDecryptorBuffer <= AgePayload.sealedChunkSize + 1)
        // One sealed chunk (ciphertext and tag) per emit at most.
        #expect(largestEmit <= AgePayload.sealedChunkSize)
    }
}
