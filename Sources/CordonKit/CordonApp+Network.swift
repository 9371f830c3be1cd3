import CordonProtocol

extension CordonApp {
    /// The app's effective network policy (docs/ARCHITECTURE.md, "Pinned channel"): the pins,
    /// `unpinnedHosts` and the client certificate `SecureChannel` and `cordon run --tunnel` enforce.
    public func networkPolicy() async throws -> NetworkPolicy {
        try await control.call(
            named: "io.cordon.App.GetNetworkPolicy", NetworkPolicyParameters(token: nil),
            returning: NetworkPolicyReply.self
        ).policy
    }
}

/// The parameters of `io.cordon.App.GetNetworkPolicy`.
private struct NetworkPolicyParameters: Codable, Sendable {
    var token: String?
}
