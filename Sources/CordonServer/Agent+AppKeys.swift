import CordonSecrets

/// App keys as components need them (`StorageComponent`): derived from the master key with the
/// app's key generation (docs/ARCHITECTURE.md, "Keys").
extension Agent {
    /// `appId`'s key now, or nil when the master key is not held. The caller zeroes it.
    func appKey(for appId: String) -> SecureBytes? {
        guard let master = masterKey else { return nil }
        return custody.appKey(master: master, appId: appId, generation: appGenerations[appId] ?? 0)
    }

    /// Records `appId`'s new key generation (after it was stored).
    func setAppGeneration(_ appId: String, _ generation: Int) {
        appGenerations[appId] = generation
    }
}
