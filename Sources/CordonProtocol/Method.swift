/// The methods the agent serves, by fully qualified name.
public enum Method: String, Sendable, CaseIterable {
    case getInfo = "org.varlink.service.GetInfo"
    case getInterfaceDescription = "org.varlink.service.GetInterfaceDescription"
    case getStatus = "io.cordon.Agent.GetStatus"
    case initialize = "io.cordon.Agent.Initialize"
    case unlock = "io.cordon.Agent.Unlock"
    case lock = "io.cordon.Agent.Lock"
    case logout = "io.cordon.Agent.Logout"
    case changePasscode = "io.cordon.Agent.ChangePasscode"
    case wipe = "io.cordon.Agent.Wipe"
    case listApps = "io.cordon.Agent.ListApps"
    case register = "io.cordon.App.Register"
    case subscribe = "io.cordon.App.Subscribe"
    case acknowledge = "io.cordon.App.Acknowledge"
    case getKey = "io.cordon.App.GetKey"
    case reportActivity = "io.cordon.App.ReportActivity"
    case requestUnlock = "io.cordon.App.RequestUnlock"
    case shareDocument = "io.cordon.App.ShareDocument"
    case copy = "io.cordon.Pasteboard.Copy"
    case paste = "io.cordon.Pasteboard.Paste"
    case clear = "io.cordon.Pasteboard.Clear"
    case check = "io.cordon.App.Check"
    case getEffectivePolicy = "io.cordon.Policy.GetEffective"
    case validatePolicy = "io.cordon.Policy.Validate"
    case explainPolicy = "io.cordon.Policy.Explain"
    case reloadPolicy = "io.cordon.Policy.Reload"
    case getPolicyStatus = "io.cordon.Policy.GetStatus"
    case queryAudit = "io.cordon.Audit.Query"
    case followAudit = "io.cordon.Audit.Follow"
}

/// Limits every connection is held to.
public struct ConnectionLimits: Sendable, Equatable {
    /// The largest message accepted, in bytes (excluding the NUL).
    public var maxMessageBytes: Int
    /// The most unanswered calls (messages) buffered per connection; past half of it reading pauses.
    public var maxPendingCalls: Int
    /// The most events queued for a subscriber that does not read before it is disconnected.
    public var maxQueuedEvents: Int
    /// The most connections one uid may hold.
    public var maxConnectionsPerUID: Int

    public init(maxMessageBytes: Int, maxPendingCalls: Int, maxQueuedEvents: Int, maxConnectionsPerUID: Int) {
        self.maxMessageBytes = maxMessageBytes
        self.maxPendingCalls = maxPendingCalls
        self.maxQueuedEvents = maxQueuedEvents
        self.maxConnectionsPerUID = maxConnectionsPerUID
    }

    /// The defaults: 64 KiB messages, 64 pipelined calls, 256 queued events, 4096 connections.
    public static let standard = ConnectionLimits(
        maxMessageBytes: 64 * 1024, maxPendingCalls: 64, maxQueuedEvents: 256, maxConnectionsPerUID: 4096)
}
