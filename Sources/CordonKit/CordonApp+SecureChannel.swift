import CordonProtocol

extension CordonApp {
    /// A `SecureChannel` enforcing this app's network policy and following its key: no request
    /// while the key is unavailable, requests in flight cut on revocation
    /// (docs/ARCHITECTURE.md, "Pinned channel").
    public func secureChannel(configuration: SecureChannel.Configuration = SecureChannel.Configuration())
        async throws -> SecureChannel
    {
        let policy = try await networkPolicy()
        return try SecureChannel(policy: policy, configuration: configuration, gate: channelGate)
    }
}
