/// How a container's app keys are made, as the wrapping of its master key proves it: the format
/// is the AES-GCM associated data of the wrapped master key (and of its recovery wrapping), so it
/// is authenticated under the wrapping key and cannot be changed without the passcode (or the
/// recovery key) and the master key (docs/ARCHITECTURE.md, "Keys").
public enum KeystoreFormat: Sendable, Equatable, CaseIterable {
    /// `cordon.keystore.v1`: a container made before random app keys; each app's key was derived
    /// from the master key (`KeyCustody.legacyAppKey`). Migrated at its first unwrap.
    case derivedAppKeys
    /// `cordon.keystore.v2`: app keys are random, wrapped in the `appKey` table, never derived.
    case randomAppKeys

    /// What every new wrapping is made with.
    public static let current = KeystoreFormat.randomAppKeys

    /// The associated data of the passcode (and TPM) wrapping of the master key.
    var associatedData: [UInt8] {
        switch self {
        case .derivedAppKeys: return Array("cordon.keystore.v1".utf8)
        case .randomAppKeys: return Array("cordon.keystore.v2".utf8)
        }
    }

    /// The associated data of the recovery wrapping of the master key.
    var recoveryAssociatedData: [UInt8] {
        switch self {
        case .derivedAppKeys: return Array("cordon.recovery.v1".utf8)
        case .randomAppKeys: return Array("cordon.recovery.v2".utf8)
        }
    }

    /// The formats to try when unwrapping, the current one first (one AEAD open each: the KDF
    /// runs once).
    static let unwrapOrder: [KeystoreFormat] = [.randomAppKeys, .derivedAppKeys]
}
