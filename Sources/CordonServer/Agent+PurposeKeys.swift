import CordonSecrets

/// Purpose keys as components need them (`TokensComponent`): derived from the master key
/// (docs/ARCHITECTURE.md, "Keys").
extension Agent {
    /// The key for `purpose` now, or nil when the master key is not held. The caller zeroes it.
    func purposeKey(_ purpose: [String]) -> SecureBytes? {
        guard let master = masterKey else { return nil }
        return custody.purposeKey(master: master, purpose: purpose)
    }
}
