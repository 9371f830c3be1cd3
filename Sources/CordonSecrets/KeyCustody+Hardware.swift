import Crypto
import Foundation
import _CryptoExtras

/// Wrapping with a hardware secret and a recovery key (docs/ARCHITECTURE.md, "Keys").
///
/// With a TPM, scrypt of the passcode (the *stretched* passcode) serves twice: HKDF of it with
/// `cordon.tpm-auth.v1` is the authValue of the TPM object that seals a random 32-byte secret,
/// and the wrapping key is HKDF(stretched ‖ secret, `cordon.kek.tpm.v1`). So unwrapping needs the
/// passcode and the TPM, and the TPM counts every wrong passcode against its lockout.
extension KeyCustody {
    static let hardwareAuthInfo = Array("cordon.tpm-auth.v1".utf8)
    static let hardwareKEKInfo = Array("cordon.kek.tpm.v1".utf8)
    static let recoveryInfo = Array("cordon.recovery.v1".utf8)

    /// scrypt of `passcode` with `kdf`, in locked memory.
    public func stretch(passcode: String, kdf: KDFParameters) throws -> SecureBytes {
        let key = try deriveWrappingKey(passcode: passcode, kdf: kdf)
        return key.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// A random 32-byte secret (the TPM-sealed secret, the recovery key).
    public func makeSecret() -> SecureBytes { makeMasterKey() }

    /// The TPM object's authValue for a stretched passcode.
    public func hardwareAuthorization(stretched: SecureBytes) -> SecureBytes {
        let derived = stretched.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), info: Self.hardwareAuthInfo, outputByteCount: 32)
        }
        return derived.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// Wraps `master` under the stretched passcode and, when given, the TPM's secret, in `format`
    /// (the current one unless a test builds a container of before); `anchorIndex` binds the record
    /// to the state anchor (`WrappedKey.anchorIndex`).
    public func wrap(
        _ master: SecureBytes, stretched: SecureBytes, hardwareSecret: SecureBytes?, kdf: KDFParameters,
        format: KeystoreFormat = .current, anchorIndex: UInt32? = nil
    ) throws -> WrappedKey {
        let kek = wrappingKey(stretched: stretched, hardwareSecret: hardwareSecret)
        let data = format.associatedData + WrappedKey.anchorBinding(anchorIndex)
        return WrappedKey(
            kdf: kdf, sealed: try seal(master, under: kek, authenticating: data), anchorIndex: anchorIndex)
    }

    /// Unwraps with the stretched passcode and the TPM's secret (nil for software protection);
    /// throws `KeyCustodyError.wrongPasscode` when they do not open the record.
    public func unwrap(_ wrapped: WrappedKey, stretched: SecureBytes, hardwareSecret: SecureBytes?) throws
        -> SecureBytes
    {
        try unwrapReportingFormat(wrapped, stretched: stretched, hardwareSecret: hardwareSecret).key
    }

    /// As ``unwrap(_:stretched:hardwareSecret:)``, and which ``KeystoreFormat`` the record is in
    /// (the current one tried first; a record of before opens with its own associated data).
    public func unwrapReportingFormat(_ wrapped: WrappedKey, stretched: SecureBytes, hardwareSecret: SecureBytes?)
        throws -> (key: SecureBytes, format: KeystoreFormat)
    {
        let kek = wrappingKey(stretched: stretched, hardwareSecret: hardwareSecret)
        let binding = WrappedKey.anchorBinding(wrapped.anchorIndex)
        return try open(wrapped.sealed, under: kek) { $0.associatedData + binding }
    }

    /// The master key wrapped under `recoveryKey` (HKDF of it with `cordon.recovery.v1`), its
    /// format authenticated (`cordon.recovery.v2` for the current one).
    public func wrapForRecovery(_ master: SecureBytes, recoveryKey: SecureBytes, format: KeystoreFormat = .current)
        throws -> [UInt8]
    {
        try seal(master, under: recoveryWrappingKey(recoveryKey), authenticating: format.recoveryAssociatedData)
    }

    /// The master key from its recovery wrapping; `wrongPasscode` when the recovery key is wrong.
    public func unwrapWithRecovery(_ sealed: [UInt8], recoveryKey: SecureBytes) throws -> SecureBytes {
        try unwrapWithRecoveryReportingFormat(sealed, recoveryKey: recoveryKey).key
    }

    /// As ``unwrapWithRecovery(_:recoveryKey:)``, and the format the recovery wrapping was made in.
    public func unwrapWithRecoveryReportingFormat(_ sealed: [UInt8], recoveryKey: SecureBytes) throws
        -> (key: SecureBytes, format: KeystoreFormat)
    {
        try open(sealed, under: recoveryWrappingKey(recoveryKey)) { $0.recoveryAssociatedData }
    }

    private func wrappingKey(stretched: SecureBytes, hardwareSecret: SecureBytes?) -> SymmetricKey {
        guard let hardwareSecret else { return stretched.withUnsafeBytes { SymmetricKey(data: $0) } }
        var material = [UInt8](repeating: 0, count: stretched.count + hardwareSecret.count)
        defer { for index in material.indices { material[index] = 0 } }
        stretched.withUnsafeBytes { bytes in material.replaceSubrange(0..<bytes.count, with: bytes) }
        hardwareSecret.withUnsafeBytes { bytes in
            material.replaceSubrange(stretched.count..<material.count, with: bytes)
        }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), info: Self.hardwareKEKInfo, outputByteCount: 32)
    }

    private func recoveryWrappingKey(_ recoveryKey: SecureBytes) -> SymmetricKey {
        recoveryKey.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), info: Self.recoveryInfo, outputByteCount: 32)
        }
    }

    private func seal(_ master: SecureBytes, under key: SymmetricKey, authenticating data: [UInt8]) throws
        -> [UInt8]
    {
        let box = try master.withUnsafeBytes { bytes in try AES.GCM.seal(bytes, using: key, authenticating: data) }
        guard let combined = box.combined else { throw KeyCustodyError.sealFailed }
        return Array(combined)
    }

    /// Opens `sealed` with the associated data of each format in turn (the current one first);
    /// `wrongPasscode` when none opens it.
    func open(_ sealed: [UInt8], under key: SymmetricKey, authenticating data: (KeystoreFormat) -> [UInt8]) throws
        -> (key: SecureBytes, format: KeystoreFormat)
    {
        guard let box = try? AES.GCM.SealedBox(combined: sealed) else { throw KeyCustodyError.wrongPasscode }
        for format in KeystoreFormat.unwrapOrder {
            guard var plain = try? AES.GCM.open(box, using: key, authenticating: data(format)) else { continue }
            defer { plain.resetBytes(in: 0..<plain.count) }
            return (SecureBytes(copying: plain), format)
        }
        throw KeyCustodyError.wrongPasscode
    }
}
