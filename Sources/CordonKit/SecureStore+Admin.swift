import CordonProtocol
import Foundation

/// An administrator's access to apps' storage through the agent (`io.cordon.Storage`, the
/// `cordon storage` and `cordon wipe --app` commands): each call names the app and gives the
/// passcode, which the agent checks and counts like `Unlock`'s, and audits.
extension CordonClient {
    /// Records and bytes per app (no passcode: no record is read).
    public func storageUsage() async throws -> [StorageAppUsage] {
        try await connection.call(.storageUsage, NoParameters(), returning: StorageUsageReply.self).apps
    }

    /// The names in `appId`'s `namespace` that start with `prefix`.
    public func storageList(appId: String, namespace: String? = nil, prefix: String? = nil, passcode: String)
        async throws -> [String]
    {
        try await connection.call(
            .storageList,
            StorageListParameters(namespace: namespace, prefix: prefix, appId: appId, passcode: passcode),
            returning: StorageListReply.self
        ).names
    }

    /// The value of `name` in `appId`'s `namespace`.
    public func storageGet(appId: String, namespace: String? = nil, name: String, passcode: String) async throws
        -> Data
    {
        let reply = try await connection.call(
            .storageGet, StorageRecordParameters(namespace: namespace, name: name, appId: appId, passcode: passcode),
            returning: StorageGetReply.self)
        guard let value = Data(base64Encoded: reply.value) else {
            throw CordonClientError.protocolViolation("the value is not base64")
        }
        return value
    }

    /// Stores `value` under `name` in `appId`'s `namespace`.
    public func storagePut(appId: String, namespace: String? = nil, name: String, value: Data, passcode: String)
        async throws
    {
        _ = try await connection.call(
            .storagePut,
            StoragePutParameters(
                namespace: namespace, name: name, value: value.base64EncodedString(), appId: appId, passcode: passcode),
            returning: NoParameters.self)
    }

    /// Deletes `name` in `appId`'s `namespace`; returns whether it was there.
    public func storageDelete(appId: String, namespace: String? = nil, name: String, passcode: String) async throws
        -> Bool
    {
        try await connection.call(
            .storageDelete, StorageRecordParameters(namespace: namespace, name: name, appId: appId, passcode: passcode),
            returning: StorageDeleteReply.self
        ).deleted
    }

    /// `appId`'s age identity (`AGE-SECRET-KEY-1…`) and recipient (`age1…`): what the `age` CLI
    /// needs to decrypt the app's `SecureFile` files. Needs the passcode; audited.
    public func exportIdentity(appId: String, passcode: String) async throws -> StorageExportIdentityReply {
        try await connection.call(
            .storageExportIdentity, StorageWipeAppParameters(appId: appId, passcode: passcode),
            returning: StorageExportIdentityReply.self)
    }

    /// Crypto-erases one app's data (selective wipe): its random key is destroyed and its
    /// storage deleted; other apps are untouched.
    public func wipeApp(_ appId: String, passcode: String) async throws {
        _ = try await connection.call(
            .storageWipeApp, StorageWipeAppParameters(appId: appId, passcode: passcode), returning: NoParameters.self)
    }
}
