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

    static func payloadKey(fileKey: SymmetricKey, nonce: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
    }

    /// The ChaCha20-Poly1305 nonce of chunk `counter`.
    static func chunkNonce(counter: UInt64, final: Bool) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: chunkNonceSize)
        for index in 0..<8 { bytes[10 - index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * index)) }
        bytes[11] = final ? 1 : 0
        return Invariant.nonce(bytes)
    }

    /// Seals `plaintext` as chunk `counter` and hands its ciphertext and tag to `emit`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, counter: UInt64, final: Bool,
        emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        let box = Invariant.seal(plaintext, key: key, nonce: chunkNonce(counter: counter, final: final))
        // `combined` is nonce ‖ ciphertext ‖ tag in one buffer: the chunk is its tail, emitted in one
        // piece without copying (`ciphertext` and `tag` would each copy, and cost two writes).
        try emitData(box.combined.dropFirst(chunkNonceSize), emit)
    }

    /// The plaintext of `sealed` as chunk `counter`, or nil when it does not authenticate.
    static func open(
        _ sealed: UnsafeRawBufferPointer, key: SymmetricKey, counter: UInt64, final: Bool
    ) -> Data? {
        guard sealed.count >= tagSize else { return nil }
        let split = sealed.count - tagSize
        guard
            let box = try? ChaChaPoly.SealedBox(
                nonce: chunkNonce(counter: counter, final: final),
                ciphertext: UnsafeRawBufferPointer(rebasing: sealed[..<split]),
                tag: UnsafeRawBufferPointer(rebasing: sealed[split...]))
        else { return nil }
        return try? ChaChaPoly.open(box, using: key)
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
