import CordonProtocol

/// Identifies one client connection inside the agent.
public typealias ConnectionID = Int

/// One registered app: who it is, where its events go, and whether it has complied.
public struct AppRegistration: Sendable, Equatable {
    /// The connection that registered (the app's lifetime).
    public let connection: ConnectionID
    public let appId: String
    /// The app's process: the one policy checked and enforcement acts on.
    public let pid: Int
    /// The process that holds the connection: `pid` itself, or the parent that registered on
    /// the app's behalf (`cordon run`).
    public let ownerPid: Int
    public let executable: String
    /// Managed apps get a key; unmanaged ones only state events.
    public let managed: Bool
    /// Binds a subscription on another connection to this registration.
    public let token: String
    /// The connection streaming this app's events, if subscribed.
    public var subscriber: ConnectionID?
    /// The seq of an `EncryptionKeyUnavailable` not yet acknowledged.
    public var pendingSeq: Int?
    /// When the pending acknowledgement is due.
    public var deadline: Double?
    public var lastAckSeq: Int?
    /// Set once the deadline passed without an acknowledgement.
    public var overdue = false
    /// What the agent did about it (freeze, terminate, ...), until the obligation lapses.
    public var enforcement: EnforcementAction?

    public init(
        connection: ConnectionID, appId: String, pid: Int, ownerPid: Int? = nil, executable: String, managed: Bool,
        token: String
    ) {
        self.connection = connection
        self.appId = appId
        self.pid = pid
        self.ownerPid = ownerPid ?? pid
        self.executable = executable
        self.managed = managed
        self.token = token
    }

    /// The app's compliance as reported by `ListApps`.
    public var compliance: Compliance {
        if !managed { return .unmanaged }
        switch enforcement {
        case .freeze: return .frozen
        case .terminate: return .terminated
        default: break
        }
        if overdue { return .overdue }
        return pendingSeq == nil ? .compliant : .pending
    }

    /// The wire form.
    public var info: AppInfo {
        AppInfo(
            appId: appId, pid: pid, executable: executable, managed: managed, subscribed: subscriber != nil,
            compliance: compliance, pendingSeq: pendingSeq, lastAckSeq: lastAckSeq)
    }
}
