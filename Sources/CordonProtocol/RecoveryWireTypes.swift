/// `Initialize` reply: the recovery key, shown once (docs/PROTOCOL.md, "Recovery key").
public struct InitializeReply: Sendable, Codable {
    /// 48 digits in 8 dash-separated groups of 6; nil from an agent that makes none.
    public var recoveryKey: String?
    public init(recoveryKey: String?) { self.recoveryKey = recoveryKey }
}

/// `Recover` parameters: the recovery key and the new passcode.
public struct RecoverParameters: Sendable, Codable {
    public var recoveryKey: String
    public var passcode: String
    public init(recoveryKey: String, passcode: String) {
        self.recoveryKey = recoveryKey
        self.passcode = passcode
    }
}

/// `Recover` reply: the new recovery key (the one given no longer works).
public struct RecoverReply: Sendable, Codable {
    public var recoveryKey: String
    public init(recoveryKey: String) { self.recoveryKey = recoveryKey }
}
