import CordonProtocol

extension PolicyEvaluator {
    /// App `appId`'s effective `network` policy, as `io.cordon.App.GetNetworkPolicy` answers it
    /// (docs/ARCHITECTURE.md, "Pinned channel"): every `network.pins` entry of the base and of the
    /// overrides listing the app, each with its source (file and JSON pointer of the entry), in the
    /// order of those rules; `unpinnedHosts` (the strictest) and the client certificate with theirs.
    public func networkPolicy(appId: String) -> NetworkPolicy {
        policy.networkPolicy(appId: appId)
    }
}

extension EffectivePolicy {
    /// App `appId`'s effective `network` policy (see `PolicyEvaluator.networkPolicy(appId:)`).
    public func networkPolicy(appId: String) -> NetworkPolicy {
        let settings = forApp(appId)
        var pins: [NetworkPolicy.Pin] = []
        for candidate in settings[PolicyKeys.Network.pins].candidates {
            for (index, entry) in candidate.value.entries.enumerated() {
                pins.append(
                    NetworkPolicy.Pin(
                        hosts: entry.hosts, pinSha256: entry.pinSha256, caCertificates: entry.caCertificates,
                        source: "\(candidate.rule)/\(index)"))
            }
        }
        let unpinned = settings[PolicyKeys.Network.unpinnedHosts]
        let client = settings[PolicyKeys.Network.clientCertificate].value
        return NetworkPolicy(
            pins: pins, unpinnedHosts: unpinned.value.rawValue, unpinnedHostsSource: Self.source(of: unpinned.rules),
            clientCertificate: client.map {
                NetworkPolicy.ClientCertificate(certificate: $0.certificate, key: $0.key)
            }, onLock: settings[PolicyKeys.Network.onLock].value.rawValue)
    }

    /// `file#pointer` of each rule (comma-separated), or `built-in default`.
    static func source(of rules: [RuleReference]) -> String {
        let named = rules.filter { $0.source.origin != .builtin }
        guard !named.isEmpty else { return "built-in default" }
        return named.map(\.description).joined(separator: ", ")
    }
}
