/// `GetStatus` reply.
public struct StatusReply: Sendable, Codable {
    public var status: AgentStatus; public init(status: AgentStatus) { self.status = status }
}

/// `Initialize` parameters.
public struct InitializeParameters: Sendable, Codable {
    public var passcode: String
    public init(passcode: String) { self.passcode = passcode }
}

/// `Unlock` parameters; the passcode may be omitted within the re-authentication grace.
public struct UnlockParameters: Sendable, Codable {
    public var passcode: String?
    public init(passcode: String?) { self.passcode = passcode }
}

/// `ChangePasscode` parameters.
public struct ChangePasscodeParameters: Sendable, Codable {
    public var old: String
    public var new: String
    public init(old: String, new: String) {
        self.old = old
        self.new = new
    }
}

/// `Wipe` parameters: `confirm` must be true, and the passcode is required (a same-user program
/// must not be able to erase the container; docs/THREAT-MODEL.md).
public struct WipeParameters: Sendable, Codable {
    public var confirm: Bool
    /// The container's passcode; without it the call fails with `PasscodeRequired`.
    public var passcode: String?
    public init(confirm: Bool, passcode: String? = nil) {
        self.confirm = confirm
        self.passcode = passcode
    }
}

/// `ListApps` reply.
public struct ListAppsReply: Sendable, Codable {
    public var apps: [AppInfo]
    public init(apps: [AppInfo]) { self.apps = apps }
}

/// `Register` parameters. `pid` registers on behalf of a child process of the caller (as
/// `cordon run` does): the agent checks, enforces on and identifies that process instead.
public struct RegisterParameters: Sendable, Codable {
    public var appId: String
    public var pid: Int?
    public init(appId: String, pid: Int? = nil) {
        self.appId = appId
        self.pid = pid
    }
}

/// `Register` reply: the token binds a subscription on another connection to this registration.
public struct RegisterReply: Sendable, Codable {
    public var appId: String
    public var managed: Bool
    public var token: String
    public init(appId: String, managed: Bool, token: String) {
        self.appId = appId
        self.managed = managed
        self.token = token
    }
}

/// `Subscribe` parameters: a registration token, or none to observe only.
public struct SubscribeParameters: Sendable, Codable {
    public var token: String?
    public init(token: String?) { self.token = token }
}

/// One `Subscribe` reply.
public struct SubscribeReply: Sendable, Codable {
    public var event: CordonEvent
    public init(event: CordonEvent) { self.event = event }
}

/// `Acknowledge` parameters.
public struct AcknowledgeParameters: Sendable, Codable {
    public var seq: Int
    public var status: AcknowledgeStatus
    public init(seq: Int, status: AcknowledgeStatus) {
        self.seq = seq
        self.status = status
    }
}

/// `GetKey` reply: the app's own 256-bit key, base64.
public struct GetKeyReply: Sendable, Codable {
    public var key: String
    public init(key: String) { self.key = key }
}

/// `org.varlink.service.GetInfo` reply.
public struct ServiceInfo: Sendable, Codable, Equatable {
    public var vendor: String
    public var product: String
    public var version: String
    public var url: String
    public var interfaces: [String]
    public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.interfaces = interfaces
    }
}

/// `org.varlink.service.GetInterfaceDescription` parameters.
public struct InterfaceDescriptionParameters: Sendable, Codable {
    public var interface: String
    public init(interface: String) { self.interface = interface }
}

/// `org.varlink.service.GetInterfaceDescription` reply.
public struct InterfaceDescriptionReply: Sendable, Codable {
    public var description: String
    public init(description: String) { self.description = description }
}
