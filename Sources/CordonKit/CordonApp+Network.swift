import CordonProtocol

extension CordonApp {
    /// This app's effective `network` policy (docs/ARCHITECTURE.md, "Pinned channel"): the pins
    /// with their sources, what hosts no pattern names get, and the client certificate. Asked
    /// anew on every call, so after a policy change (a `policyDidChange` event) it is the new one.
    ///
    /// ```swift
    /// let policy = try await app.networkPolicy()
    /// for pin in policy.pins { print(pin.hosts, pin.source) }
    /// ```
    public func networkPolicy() async throws -> NetworkPolicy {
        try await control.call(.getNetworkPolicy, GetNetworkPolicyParameters(), returning: NetworkPolicyReply.self)
            .policy
    }
}
