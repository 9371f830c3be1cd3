import CordonAppStorage
import CordonSecrets
import CordonStore
import Foundation

/// Migrates a container made before random app keys (`KeystoreFormat.derivedAppKeys`;
/// docs/ARCHITECTURE.md, "Keys") at the first unwrap of its master key — a passcode check
/// (unlock, passcode change, wipe) or the recovery key. Runs on the store pool.
///
/// The current derived key (with its legacy generation) of every app that may have data is
/// wrapped into an `appKey` row, and the master key is re-wrapped in the current format, all in
/// one transaction: from then on app keys come only from rows, and a row deleted is a key gone.
/// The apps that may have data are the union of those with a storage file, those with an
/// `appGeneration` row, those the audit log names, and (gathered on the loop) those the policy
/// names and those registered now. An app in none of them gets a fresh random key later.
struct AppKeyMigration: Sendable {
    let database: CordonDatabase
    let custody: KeyCustody
    let dataDirectory: String
    /// The app ids the policy names and the registered apps' ids, read on the loop.
    let knownAppIds: Set<String>

    /// Every app that may have data under a derived key.
    func appIds() throws -> Set<String> {
        var ids = knownAppIds
        ids.formUnion(AppStorage.storedAppIds(dataDirectory: dataDirectory))
        ids.formUnion(try database.appGenerations().keys)
        ids.formUnion(try database.auditedAppIds())
        return ids
    }

    /// Wraps the derived key of every app that may have data and has no row yet, and stores the
    /// rows with `keystore` (the master key re-wrapped in the current format) in one transaction.
    /// Returns every wrapped app key stored afterwards.
    /// `anchor`, when given, is a new state anchor the rows and the record are stored under.
    func migrate(master: SecureBytes, keystore: WrappedKey, anchor: StateAnchor? = nil) throws -> [String: [UInt8]] {
        let existing = try database.wrappedAppKeys()
        let generations = try database.appGenerations()
        var rows: [String: [UInt8]] = [:]
        for appId in try appIds() where existing[appId] == nil {
            let key = custody.legacyAppKey(master: master, appId: appId, generation: generations[appId] ?? 0)
            defer { key.zero() }
            rows[appId] = try custody.wrapAppKey(key, appId: appId, master: master)
        }
        try database.storeAppKeyMigration(rows, keystore: keystore, now: Date().timeIntervalSince1970, anchor: anchor)
        return existing.merging(rows) { stored, _ in stored }
    }
}
