import CordonSecrets
import CordonStore
import Foundation

/// Each app's random key (docs/ARCHITECTURE.md, "Keys"): wrapped in the `appKey` table under a
/// key derived from the master key, unwrapped into locked memory while the master key is held
/// (zeroed with it: a lock that discards, a wipe, shutdown). A selective wipe deletes the row:
/// the app's next key is a new random one, and nothing derives the old one again.
extension KeyVault {
    /// `appId`'s key now, or nil when the master key is not held, its key is being destroyed, or
    /// its key cannot be read or stored. The caller zeroes it.
    ///
    /// An app without a key gets a new random one, durably stored before it is handed out: a
    /// synchronous insert on the event loop, once in the app's lifetime (and once after each
    /// selective wipe of it), so `GetKey` and storage stay synchronous.
    func appKey(for appId: String) -> SecureBytes? {
        guard let master = masterKey, !appKeysBeingDestroyed.contains(appId) else { return nil }
        if let key = appKeys[appId] { return key.withUnsafeBytes { SecureBytes(copying: $0) } }
        let key: SecureBytes
        if let wrapped = wrappedAppKeys[appId] {
            do {
                key = try custody.unwrapAppKey(wrapped, appId: appId, master: master)
            } catch {
                logger.error("an app key does not open under the master key", metadata: ["appId": "\(appId)"])
                return nil
            }
        } else {
            key = custody.makeAppKey()
            do {
                let wrapped = try custody.wrapAppKey(key, appId: appId, master: master)
                try host.database.insertAppKey(appId: appId, wrapped: wrapped, now: Date().timeIntervalSince1970)
                wrappedAppKeys[appId] = wrapped
                logger.info("a new random app key is stored", metadata: ["appId": "\(appId)"])
            } catch {
                key.zero()
                logger.error("could not store a new app key: \(error)", metadata: ["appId": "\(appId)"])
                return nil
            }
        }
        appKeys[appId] = key
        return key.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// A selective wipe starts destroying `appId`'s key: the unwrapped key is zeroed, the wrapped
    /// one forgotten, and no key is handed out for the app until ``appKeyDestroyed(_:failed:)``.
    func destroyingAppKey(_ appId: String) {
        appKeysBeingDestroyed.insert(appId)
        appKeys.removeValue(forKey: appId)?.zero()
        wrappedAppKeys[appId] = nil
    }

    /// The wipe of `appId`'s key ended: its row is deleted, so its next key is a new random one;
    /// if the wipe `failed`, the row may still be there and is read again (on the loop: a rare
    /// error path).
    func appKeyDestroyed(_ appId: String, failed: Bool) {
        appKeysBeingDestroyed.remove(appId)
        wrappedAppKeys[appId] = nil
        guard failed else { return }
        do {
            wrappedAppKeys[appId] = try host.database.wrappedAppKeys()[appId]
        } catch {
            logger.error("could not read the app keys after a failed wipe: \(error)", metadata: ["appId": "\(appId)"])
        }
    }

    /// How a container of derived app keys is migrated now: the app ids the policy names and the
    /// registered apps' ids read here, on the loop; the rest on the store pool (`AppKeyMigration`).
    var appKeyMigration: AppKeyMigration {
        let policy = host.policy.policy
        var known = Set(policy.managedApps.keys).union(policy.overrides.keys)
        known.formUnion(host.registry.registrations.values.map(\.appId))
        return AppKeyMigration(
            database: host.database, custody: custody, dataDirectory: host.configuration.paths.dataDirectory,
            knownAppIds: known)
    }

    /// A migration stored `keys` (every wrapped app key after it): from now on app keys come only
    /// from them, or are made at random. A key a selective wipe is destroying meanwhile (queued
    /// behind the migration on the store pool) is not taken back.
    func appKeysMigrated(_ keys: [String: [UInt8]]) {
        wrappedAppKeys = keys.filter { !appKeysBeingDestroyed.contains($0.key) }
        logger.notice(
            "container migrated to random app keys: each app's derived key is now a wrapped row",
            metadata: ["apps": "\(keys.count)"])
    }

    /// Zeroes every unwrapped app key (the master key is discarded or replaced).
    func zeroAppKeys() {
        for key in appKeys.values { key.zero() }
        appKeys = [:]
    }
}
