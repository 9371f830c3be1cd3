import Crypto
import Foundation
import _CryptoExtras

/// Creates, wraps, unwraps and derives keys (docs/ARCHITECTURE.md, "Keys").
///
/// The master key is a random 256-bit key; it is wrapped with AES-256-GCM under a key derived
/// from the passcode with scrypt, authenticating the ``KeystoreFormat``. Each app's key is random
/// and kept wrapped under a key derived from the master key (`KeyCustody+AppKeys.swift`).
public struct KeyCustody: Sendable {
    static let appKeyInfoPrefix = Array("cordon.app.v1:".utf8)

    public init() {}

    /// A new random master key in locked memory.
    public func makeMasterKey() -> SecureBytes {
        SecureBytes(count: 32) { buffer in
            var generator = SystemRandomNumberGenerator()
            for index in buffer.indices { buffer[index] = generator.next() }
        }
    }

    /// A fresh random salt.
    public func makeSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in generator.next() }
    }

    /// Wraps `master` under `passcode` with the given KDF parameters, in `format` (the current one
    /// unless a test builds a container of before).
    public func wrap(
        _ master: SecureBytes, passcode: String, kdf: KDFParameters, format: KeystoreFormat = .current
    ) throws -> WrappedKey {
        let kek = try deriveWrappingKey(passcode: passcode, kdf: kdf)
        let box = try master.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: kek, authenticating: format.associatedData)
        }
        guard let combined = box.combined else { throw KeyCustodyError.sealFailed }
        return WrappedKey(kdf: kdf, sealed: Array(combined))
    }

    /// Unwraps the master key; throws `KeyCustodyError.wrongPasscode` when the passcode is wrong.
    public func unwrap(_ wrapped: WrappedKey, passcode: String) throws -> SecureBytes {
        let kek = try deriveWrappingKey(passcode: passcode, kdf: wrapped.kdf)
        return try open(wrapped.sealed, under: kek) { $0.associatedData }.key
    }

    /// The legacy derivation of an app's key, for migrating a container of ``KeystoreFormat/derivedAppKeys``
    /// only (`AppKeyMigration`): HKDF-SHA256 of the master key with the app id and the app's key
    /// generation as info (generation 0: `cordon.app.v1:` and the app id). Nothing else derives an
    /// app key: after the migration every app key is read from its wrapped row, or made at random
    /// (docs/ARCHITECTURE.md, "Keys").
    public func legacyAppKey(master: SecureBytes, appId: String, generation: Int = 0) -> SecureBytes {
        let info =
            generation == 0
            ? Self.appKeyInfoPrefix + Array(appId.utf8)
            : Array("cordon.app.v2:".utf8) + RecordSealer.associatedData([appId, String(generation)])
        let derived = master.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), info: info, outputByteCount: 32)
        }
        return derived.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// A key for one purpose (storage records, token seeds, ...): HKDF-SHA256 of the master key with
    /// `cordon.purpose.v1:` and the purpose's fields (each length-prefixed, as `RecordSealer` encodes a
    /// slot) as info, so no two purposes and no purpose and app key share a key.
    public func purposeKey(master: SecureBytes, purpose: [String]) -> SecureBytes {
        var info = Array("cordon.purpose.v1:".utf8)
        info += RecordSealer.associatedData(purpose)
        let derived = master.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), info: info, outputByteCount: 32)
        }
        return derived.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    func deriveWrappingKey(passcode: String, kdf: KDFParameters) throws -> SymmetricKey {
        var secret = Array(passcode.utf8)
        defer { for index in secret.indices { secret[index] = 0 } }
        return try KDF.Scrypt.deriveKey(
            from: secret, salt: kdf.salt, outputByteCount: 32, rounds: kdf.rounds,
            blockSize: kdf.blockSize, parallelism: kdf.parallelism, maxMemory: kdf.memoryBytes * 2 + (1 << 20))
    }
}

/// Why a key operation failed.
public enum KeyCustodyError: Error, Sendable, Equatable {
    /// The passcode does not unwrap the key.
    case wrongPasscode
    /// Sealing the key failed.
    case sealFailed
    /// A wrapped app key does not open as the app's under this master key.
    case appKeyRejected
}
