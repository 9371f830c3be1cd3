import CordonProtocol

extension CordonApp {
    /// A `SecureChannel` enforcing this app's network policy and following its key, the lock
    /// and the policy: no request while the key is unavailable, requests in flight cut on
    /// revocation; while locked, what `network.onLock` says; after a policy change, the new pins,
    /// and requests in flight to a server the new policy refuses cut
    /// (docs/ARCHITECTURE.md, "Pinned channel").
    public func secureChannel(configuration: SecureChannel.Configuration = SecureChannel.Configuration())
        async throws -> SecureChannel
    {
        let policy = try await networkPolicy()
        await channelGate.apply(policy)
        return try SecureChannel(policy: policy, configuration: configuration, gate: channelGate)
    }
}
