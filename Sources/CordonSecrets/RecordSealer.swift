import CCordonAEAD
import CCordonLinux
import Crypto
import Foundation

/// Seals small records at rest: AES-256-GCM under a purpose key, with the record's slot as
/// associated data (docs/ARCHITECTURE.md, "Keys").
///
/// The slot is a list of fields (for app storage: app id, namespace, record name; for a token:
/// its serial) encoded with a length before each field, so no two different slots encode the
/// same, and a record copied into another slot fails to open. The sealed form is the 12-byte
/// nonce, the ciphertext and the 16-byte tag (`AES.GCM.SealedBox.combined`).
public struct RecordSealer: Sendable {
    private let key: SymmetricKey
    /// The same key in BoringSSL's AEAD context, for opening straight into the caller's buffer
    /// (`withOpened`): BoringSSL's AES-GCM, the code swift-crypto runs, without a `SealedBox` and a
    /// `Data` per record.
    private let opener: AEADContext

    /// A sealer under `key` (32 bytes, e.g. from `KeyCustody.purposeKey`).
    public init(key: SecureBytes) {
        self.key = key.withUnsafeBytes { SymmetricKey(data: $0) }
        opener = key.withUnsafeBytes { AEADContext(aes256gcm: $0) }
    }

    /// The overhead of sealing: nonce and tag.
    public static let overhead = 12 + 16

    /// Seals `plaintext` for `slot`.
    public func seal<Bytes: DataProtocol>(_ plaintext: Bytes, slot: [String]) throws(RecordSealError) -> [UInt8] {
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(plaintext, using: key, authenticating: Self.associatedData(slot))
        } catch {
            throw .sealFailed
        }
        guard let combined = box.combined else { throw .sealFailed }
        return Array(combined)
    }

    /// Opens a sealed record for `slot` into locked memory; throws `.tampered` when the bytes were
    /// changed, belong to another slot, or were sealed under another key.
    public func open<Sealed: DataProtocol>(_ sealed: Sealed, slot: [String]) throws(RecordSealError) -> SecureBytes {
        try withOpened(sealed, slot: slot) { SecureBytes(copying: $0) }
    }

    /// Opens a sealed record for `slot` and lends the plaintext to `body`, zeroing it afterwards:
    /// for a caller that makes its own copy (a reply, an app's `Data`), so no locked page is
    /// allocated per record. Throws as `open` does.
    public func withOpened<Sealed: DataProtocol, R>(
        _ sealed: Sealed, slot: [String], _ body: (UnsafeRawBufferPointer) -> R
    ) throws(RecordSealError) -> R {
        guard sealed.count >= Self.overhead else { throw .truncated(sealed.count) }
        let associated = Self.associatedData(slot)
        let opened = sealed.withContiguousStorageIfAvailable { bytes in
            open(UnsafeRawBufferPointer(bytes), associated: associated, body)
        }
        guard let result = opened ?? Array(sealed).withUnsafeBytes({ open($0, associated: associated, body) }) else {
            throw .tampered
        }
        return result
    }

    /// Opens `sealed` (nonce, ciphertext, tag) into a buffer of its own, lends the plaintext to
    /// `body` and zeroes it; nil when it does not authenticate.
    private func open<R>(_ sealed: UnsafeRawBufferPointer, associated: [UInt8], _ body: (UnsafeRawBufferPointer) -> R)
        -> R?
    {
        let capacity = sealed.count - Self.overhead
        return withUnsafeTemporaryAllocation(byteCount: max(capacity, 1), alignment: 16) { plain -> R? in
            let count = associated.withUnsafeBytes { ad in
                cordon_aead_open_ad(
                    opener.context, sealed.baseAddress, sealed.baseAddress.map { $0 + 12 }, sealed.count - 12,
                    ad.baseAddress, ad.count, plain.baseAddress, capacity)
            }
            defer { cordon_secure_zero(plain.baseAddress, plain.count) }
            guard count >= 0 else { return nil }
            return body(UnsafeRawBufferPointer(start: plain.baseAddress, count: count))
        }
    }

    /// The slot's associated data: each field's UTF-8 length (4 bytes, big-endian), then its bytes.
    static func associatedData(_ slot: [String]) -> [UInt8] {
        var data: [UInt8] = Array("cordon.record.v1".utf8)
        for field in slot {
            let bytes = Array(field.utf8)
            let length = UInt32(bytes.count)
            data += [
                UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
            ]
            data += bytes
        }
        return data
    }
}

/// Why a record could not be sealed or opened.
public enum RecordSealError: Error, Sendable, Equatable {
    /// Sealing failed (the system's random source or the cipher).
    case sealFailed
    /// The sealed bytes are shorter than a nonce and a tag (their length).
    case truncated(Int)
    /// The record does not open: changed, from another slot, or under another key.
    case tampered
}

/// A BoringSSL AEAD context for one key, freed (and its key state zeroed by BoringSSL) with the
/// last sealer that holds it. Only read after it is made, which BoringSSL allows from any thread.
final class AEADContext: @unchecked Sendable {
    let context: OpaquePointer

    init(aes256gcm key: UnsafeRawBufferPointer) {
        guard let context = cordon_aes256gcm_new(key.baseAddress, key.count) else {
            fatalError("BoringSSL could not allocate an AEAD context")
        }
        self.context = context
    }

    deinit { cordon_aead_free(context) }
}
