/// One connection of an app's pinned channel (CordonKit's `SecureChannel`, a `cordon run --tunnel`
/// relay) that a new policy cut because it no longer admits the server: what
/// `io.cordon.App.ReportChannelCuts` carries to the agent's audit log (docs/ARCHITECTURE.md,
/// "Pinned channel").
public struct ChannelCut: Codable, Sendable, Equatable {
    /// The server's host, as the app connected to it.
    public var host: String
    /// Why the new policy refuses the server (the channel's own refusal text).
    public var reason: String

    public init(host: String, reason: String) {
        self.host = host
        self.reason = reason
    }
}

/// `io.cordon.App.ReportChannelCuts` parameters: the connections a policy change cut; `token`
/// names the registration when called on another connection of the registered process.
public struct ReportChannelCutsParameters: Codable, Sendable, Equatable {
    /// At most this many cuts in one call.
    public static let maxCuts = 256
    /// The longest host (a DNS name's 253 characters).
    public static let maxHostLength = 253
    /// The longest reason, in UTF-8 bytes.
    public static let maxReasonLength = 1024

    public var cuts: [ChannelCut]
    public var token: String?

    public init(cuts: [ChannelCut], token: String? = nil) {
        self.cuts = cuts
        self.token = token
    }

    /// The parameter (as a JSON pointer below the parameters) that breaks a limit, nil when none
    /// does.
    public var invalidParameter: String? {
        if cuts.isEmpty || cuts.count > Self.maxCuts { return "cuts" }
        for (index, cut) in cuts.enumerated() {
            if cut.host.isEmpty || cut.host.utf8.count > Self.maxHostLength { return "cuts/\(index)/host" }
            if cut.reason.isEmpty || cut.reason.utf8.count > Self.maxReasonLength { return "cuts/\(index)/reason" }
        }
        return nil
    }
}
