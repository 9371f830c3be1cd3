import CordonAppStorage
import CordonLocking
import CordonProtocol
import CordonSecrets
import Foundation

/// The app key as the SDK holds it, for `SecureStore` (and later `SecureFile`): in locked memory
/// (`SecureBytes`), fetched on first use, zeroed the moment the app's own event stream says the
/// key may no longer be used (docs/ARCHITECTURE.md, "Storage").
///
/// `CordonApp`'s events task calls `revoke()` before the app sees `DidLock`,
/// `EncryptionKeyUnavailable` or `Wiped` (its own or the container's), and when the agent is gone.
/// After a lock the next call fetches the key again: the agent hands it out while the key is held
/// under `afterFirstUnlock`, and refuses it under `whenUnlocked`, so the agent's policy decides.
final class AppKeyState: Sendable {
    struct State {
        var key: SecureBytes?
        /// Raised by every revocation: a key fetched before it is never installed after it.
        var epoch = 0
        var storages: [String: AppStorage] = [:]
    }

    private let state = Locked(State())

    /// The key in use, for tests (`isZeroed` after a revocation).
    var key: SecureBytes? { state.withLock { $0.key } }

    /// The revocation count, read before fetching a key.
    var epoch: Int { state.withLock { $0.epoch } }

    /// The open storage at `path`, if the key is held.
    func storage(at path: String) -> AppStorage? {
        state.withLock { $0.storages[path] }
    }

    /// Installs `key` fetched at `epoch` and opens the storage at `path` with it; refuses when a
    /// revocation came in between (the key is zeroed).
    func open(path: String, appId: String, key: SecureBytes, fetchedAt epoch: Int) throws(CordonError) -> AppStorage {
        try state.withLock { (state: inout State) throws(CordonError) -> AppStorage in
            guard state.epoch == epoch else {
                key.zero()
                throw .containerLocked(appId: appId, state: "revoked")
            }
            if let current = state.key, current !== key { key.zero() } else { state.key = key }
            if let open = state.storages[path] { return open }
            guard let current = state.key else { throw .containerLocked(appId: appId, state: "revoked") }
            let storage = AppStorage(path: path, appId: appId, appKey: current)
            state.storages[path] = storage
            return storage
        }
    }

    /// Installs `key` fetched at `epoch` (or keeps the one already held) and runs `body` with the
    /// key in use; refuses when a revocation came in between (the fetched key is zeroed).
    func withKey<R>(_ key: SecureBytes, fetchedAt epoch: Int, appId: String, _ body: (SecureBytes) -> R)
        throws(CordonError) -> R
    {
        try state.withLock { (state: inout State) throws(CordonError) -> R in
            guard state.epoch == epoch else {
                key.zero()
                throw .containerLocked(appId: appId, state: "revoked")
            }
            if let current = state.key, current !== key { key.zero() } else { state.key = key }
            guard let current = state.key else { throw .containerLocked(appId: appId, state: "revoked") }
            return body(current)
        }
    }

    /// Zeroes the key and closes every storage (each waits for its operation in flight).
    func revoke() {
        let storages = state.withLock { state in
            state.epoch += 1
            state.key?.zero()
            state.key = nil
            defer { state.storages = [:] }
            return Array(state.storages.values)
        }
        for storage in storages { storage.close() }
    }

    /// Whether `event` ends the key's use in this app.
    static func revokes(_ event: CordonEvent, appId: String) -> Bool {
        switch event.payload {
        case .didLock, .encryptionKeyUnavailable: return true
        case .wiped(let wipedApp): return wipedApp == nil || wipedApp == appId
        default: return false
        }
    }
}
