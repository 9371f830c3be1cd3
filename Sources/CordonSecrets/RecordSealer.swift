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

    /// A sealer under `key` (32 bytes, e.g. from `KeyCustody.purposeKey`).
    public init(key: SecureBytes) {
        self.key = key.withUnsafeBytes { SymmetricKey(data: $0) }
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
        var plain: Data
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            plain = try AES.GCM.open(box, using: key, authenticating: Self.associatedData(slot))
        } catch {
            throw .tampered
        }
        defer { plain.withUnsafeMutableBytes { cordon_secure_zero($0.baseAddress, $0.count) } }
        return plain.withUnsafeBytes(body)
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
