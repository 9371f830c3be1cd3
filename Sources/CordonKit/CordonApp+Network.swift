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

extension CordonApp {
    /// Writes to the agent's audit log the connections a policy change cut: the `policyChanged`
    /// errors `ChannelGate.apply(_:)` returned (any other error is not a policy cut and is left
    /// out). The app's own `secureChannel()` reports its cuts by itself; a supervisor with a gate
    /// of its own (`cordon run --tunnel`) calls this. Returns once the agent stored them.
    public func reportChannelCuts(_ cuts: [SecureChannelError]) async throws {
        try await Self.reportChannelCuts(cuts, over: control)
    }

    /// `ReportChannelCuts` over `control`, in calls of at most the agent's limit, each reason cut
    /// to the limit's length.
    static func reportChannelCuts(_ errors: [SecureChannelError], over control: VarlinkClientConnection) async throws {
        let cuts = errors.compactMap { error -> ChannelCut? in
            guard case .policyChanged(let host, let reason) = error else { return nil }
            return ChannelCut(
                host: String(host.prefix(ReportChannelCutsParameters.maxHostLength)),
                reason: Self.prefix(reason, utf8: ReportChannelCutsParameters.maxReasonLength))
        }
        var start = 0
        while start < cuts.count {
            let end = min(start + ReportChannelCutsParameters.maxCuts, cuts.count)
            _ = try await control.call(
                .reportChannelCuts, ReportChannelCutsParameters(cuts: Array(cuts[start..<end])),
                returning: NoParameters.self)
            start = end
        }
    }

    /// The longest prefix of `text` of at most `limit` UTF-8 bytes, cut at a character boundary.
    static func prefix(_ text: String, utf8 limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= limit else { break }
            result.append(character)
            count += size
        }
        return result
    }
}
