import Crypto
import Foundation

/// Each app's key (docs/ARCHITECTURE.md, "Keys"): 32 random bytes, stored wrapped with
/// AES-256-GCM under `purposeKey(master, ["app-keys"])`, the app id authenticated, so a wrapped key
/// opens only as its own app's. Deleting the wrapped key destroys the app key: nothing derives it.
extension KeyCustody {
    /// The purpose of the key that wraps every app key.
    public static let appKeysPurpose = ["app-keys"]

    /// A new random app key in locked memory.
    public func makeAppKey() -> SecureBytes { makeMasterKey() }

    /// `appKey` wrapped for `appId` under the app-key wrapping key of `master`.
    public func wrapAppKey(_ appKey: SecureBytes, appId: String, master: SecureBytes) throws -> [UInt8] {
        let wrapping = appKeyWrappingKey(master: master)
        let box = try appKey.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: wrapping, authenticating: Self.appKeyAssociatedData(appId))
        }
        guard let combined = box.combined else { throw KeyCustodyError.sealFailed }
        return Array(combined)
    }

    /// The app key `wrapped` holds for `appId`; `KeyCustodyError.appKeyRejected` when it is not
    /// `appId`'s, or not wrapped under this master key, or altered.
    public func unwrapAppKey(_ wrapped: [UInt8], appId: String, master: SecureBytes) throws -> SecureBytes {
        let wrapping = appKeyWrappingKey(master: master)
        do {
            let box = try AES.GCM.SealedBox(combined: wrapped)
            var plain = try AES.GCM.open(box, using: wrapping, authenticating: Self.appKeyAssociatedData(appId))
            defer { plain.resetBytes(in: 0..<plain.count) }
            return SecureBytes(copying: plain)
        } catch {
            throw KeyCustodyError.appKeyRejected
        }
    }

    private func appKeyWrappingKey(master: SecureBytes) -> SymmetricKey {
        let key = purposeKey(master: master, purpose: Self.appKeysPurpose)
        defer { key.zero() }
        return key.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// `cordon.app-key.v1` and the app id, each length-prefixed.
    static func appKeyAssociatedData(_ appId: String) -> [UInt8] {
        RecordSealer.associatedData(["cordon.app-key.v1", appId])
    }
}
