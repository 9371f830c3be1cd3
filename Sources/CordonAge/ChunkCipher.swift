import CCordonAEAD
import Crypto

/// ChaCha20-Poly1305 under one payload key, sealing and opening straight into the caller's
/// buffer (docs/ARCHITECTURE.md, "Modules", CordonAge): swift-crypto's `SealedBox` would copy
/// every 64 KiB chunk once more. The cipher is BoringSSL's (`CCordonAEAD`), the key lives only in
/// its context, which is zeroed when the cipher is freed.
///
/// `@unchecked Sendable`: the context is written once, at creation; BoringSSL allows concurrent
/// seal and open calls on one context.
final class ChunkCipher: @unchecked Sendable {
    private let context: OpaquePointer

    /// A cipher for the 32-byte `key`.
    init(key: SymmetricKey) {
        let context = key.withUnsafeBytes { bytes in
            cordon_chacha20poly1305_new(bytes.baseAddress, bytes.count)
        }
        guard let context else { preconditionFailure("ChaCha20-Poly1305 with a 32-byte key: allocation failed") }
        self.context = context
    }

    deinit { cordon_aead_free(context) }

    /// Seals `plaintext` under `nonce` (12 bytes) into `output` (room for the plaintext and the
    /// 16-byte tag) and returns the bytes written.
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    )
        -> Int
    {
        precondition(nonce.count == 12 && output.count >= plaintext.count + AgePayload.tagSize)
        let written = cordon_aead_seal(
            context, nonce.baseAddress, plaintext.baseAddress, plaintext.count, output.baseAddress, output.count)
        guard written >= 0 else { preconditionFailure("ChaCha20-Poly1305 seal of \(plaintext.count) bytes failed") }
        return written
    }

    /// Opens `sealed` (ciphertext, then the tag) under `nonce` into `output` and returns the
    /// plaintext's length, or nil when it does not authenticate.
    func open(
        _ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    )
        -> Int?
    {
        precondition(nonce.count == 12 && sealed.count >= AgePayload.tagSize)
        precondition(output.count >= sealed.count - AgePayload.tagSize)
        let written = cordon_aead_open(
            context, nonce.baseAddress, sealed.baseAddress, sealed.count, output.baseAddress, output.count)
        return written >= 0 ? written : nil
    }
}
