import Crypto
import Foundation
import _CryptoExtras

/// Creates, wraps, unwraps and derives keys (docs/ARCHITECTURE.md, "Keys").
///
/// The master key is a random 256-bit key; it is wrapped with AES-256-GCM under a key derived
/// from the passcode with scrypt. Each app gets HKDF-SHA256(master, info: app id).
public struct KeyCustody: Sendable {
    /// Authenticated data bound into every wrapped key.
    static let associatedData = Array("cordon.keystore.v1".utf8)
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

    /// Wraps `master` under `passcode` with the given KDF parameters.
    public func wrap(_ master: SecureBytes, passcode: String, kdf: KDFParameters) throws -> WrappedKey {
        let kek = try deriveWrappingKey(passcode: passcode, kdf: kdf)
        let box = try master.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: kek, authenticating: Self.associatedData)
        }
        guard let combined = box.combined else { throw KeyCustodyError.sealFailed }
        return WrappedKey(kdf: kdf, sealed: Array(combined))
    }

    /// Unwraps the master key; throws `KeyCustodyError.wrongPasscode` when the passcode is wrong.
    public func unwrap(_ wrapped: WrappedKey, passcode: String) throws -> SecureBytes {
        let kek = try deriveWrappingKey(passcode: passcode, kdf: wrapped.kdf)
        do {
            let box = try AES.GCM.SealedBox(combined: wrapped.sealed)
            var plain = try AES.GCM.open(box, using: kek, authenticating: Self.associatedData)
            defer { plain.resetBytes(in: 0..<plain.count) }
            return SecureBytes(copying: plain)
        } catch {
            throw KeyCustodyError.wrongPasscode
        }
    }

    /// The app's own key: HKDF-SHA256 of the master key with the app id and the app's key
    /// generation as info. Generation 0 is the original derivation (`cordon.app.v1:` and the app
    /// id), so keys from before selective wipe stay; a selective wipe raises the generation and
    /// the key of an earlier one is never derived again (docs/ARCHITECTURE.md, "Keys").
    public func appKey(master: SecureBytes, appId: String, generation: Int = 0) -> SecureBytes {
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
}
