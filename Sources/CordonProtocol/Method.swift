/// The methods the agent serves: one enum per varlink interface, so that whoever serves an
/// interface switches over exactly its methods (docs/ARCHITECTURE.md, "The path of a call").
///
/// Clients name a method as before (`.copy`, `.getKey`): each has a static member of the same
/// name. The agent routes a call by its interface, and a component that serves an interface
/// switches over that interface's enum with no `default:`, so a method added here without a
/// handler does not compile.
public enum Method: Hashable, Sendable {
    case service(Service)
    case agent(Agent)
    case app(App)
    case pasteboard(Pasteboard)
    case policy(Policy)
    case audit(Audit)
    case posture(Posture)
    case storage(Storage)
    case tokens(Tokens)
    case identity(Identity)

    /// `org.varlink.service`: what every varlink service answers.
    public enum Service: String, Sendable, CaseIterable {
        case getInfo = "GetInfo"
        case getInterfaceDescription = "GetInterfaceDescription"
    }

    /// `io.cordon.Agent`: the container's lifecycle and its passcode.
    public enum Agent: String, Sendable, CaseIterable {
        case getStatus = "GetStatus"
        case initialize = "Initialize"
        case unlock = "Unlock"
        case lock = "Lock"
        case logout = "Logout"
        case changePasscode = "ChangePasscode"
        case wipe = "Wipe"
        case listApps = "ListApps"
        case recover = "Recover"
        case unlockWithFingerprint = "UnlockWithFingerprint"
        case setBiometrics = "SetBiometrics"
    }

    /// `io.cordon.App`: what a wrapped app calls.
    public enum App: String, Sendable, CaseIterable {
        case register = "Register"
        case subscribe = "Subscribe"
        case acknowledge = "Acknowledge"
        case getKey = "GetKey"
        case reportActivity = "ReportActivity"
        case requestUnlock = "RequestUnlock"
        case shareDocument = "ShareDocument"
        case openDocument = "OpenDocument"
        case check = "Check"
        case getNetworkPolicy = "GetNetworkPolicy"
        case reportChannelCuts = "ReportChannelCuts"
    }

    /// `io.cordon.Pasteboard`: the sealed pasteboard.
    public enum Pasteboard: String, Sendable, CaseIterable {
        case copy = "Copy"
        case paste = "Paste"
        case clear = "Clear"
    }

    /// `io.cordon.Policy`: the policy in force, checked and explained.
    public enum Policy: String, Sendable, CaseIterable {
        case getEffective = "GetEffective"
        case validate = "Validate"
        case explain = "Explain"
        case reload = "Reload"
        case getStatus = "GetStatus"
    }

    /// `io.cordon.Audit`: the audit log.
    public enum Audit: String, Sendable, CaseIterable {
        case query = "Query"
        case follow = "Follow"
    }

    /// `io.cordon.Posture`: the device's posture and its signed report.
    public enum Posture: String, Sendable, CaseIterable {
        case get = "Get"
        case report = "Report"
        case getKey = "GetKey"
    }

    /// `io.cordon.Storage`: apps' sealed records.
    public enum Storage: String, Sendable, CaseIterable {
        case put = "Put"
        case get = "Get"
        case delete = "Delete"
        case list = "List"
        case usage = "Usage"
        case wipeApp = "WipeApp"
        case exportIdentity = "ExportIdentity"
    }

    /// `io.cordon.Tokens`: software tokens.
    public enum Tokens: String, Sendable, CaseIterable {
        case `import` = "Import"
        case list = "List"
        case code = "Code"
        case rename = "Rename"
        case remove = "Remove"
        case reset = "Reset"
    }

    /// `io.cordon.Identity`: the identity broker.
    public enum Identity: String, Sendable, CaseIterable {
        case getToken = "GetToken"
        case signIn = "SignIn"
        case signOut = "SignOut"
        case status = "Status"
    }
}

extension Method: CaseIterable {
    /// Every method of every interface.
    public static let allCases: [Method] =
        Service.allCases.map(Method.service) + Agent.allCases.map(Method.agent) + App.allCases.map(Method.app)
        + Pasteboard.allCases.map(Method.pasteboard) + Policy.allCases.map(Method.policy)
        + Audit.allCases.map(Method.audit) + Posture.allCases.map(Method.posture)
        + Storage.allCases.map(Method.storage) + Tokens.allCases.map(Method.tokens)
        + Identity.allCases.map(Method.identity)
}

extension Method {
    /// The interface the method belongs to (`io.cordon.Agent`).
    public var interface: String {
        switch self {
        case .service: "org.varlink.service"
        case .agent: "io.cordon.Agent"
        case .app: "io.cordon.App"
        case .pasteboard: "io.cordon.Pasteboard"
        case .policy: "io.cordon.Policy"
        case .audit: "io.cordon.Audit"
        case .posture: "io.cordon.Posture"
        case .storage: "io.cordon.Storage"
        case .tokens: "io.cordon.Tokens"
        case .identity: "io.cordon.Identity"
        }
    }

    /// The method's name within its interface (`Unlock`).
    public var member: String {
        switch self {
        case .service(let method): method.rawValue
        case .agent(let method): method.rawValue
        case .app(let method): method.rawValue
        case .pasteboard(let method): method.rawValue
        case .policy(let method): method.rawValue
        case .audit(let method): method.rawValue
        case .posture(let method): method.rawValue
        case .storage(let method): method.rawValue
        case .tokens(let method): method.rawValue
        case .identity(let method): method.rawValue
        }
    }

    /// The fully qualified name, as on the wire (`io.cordon.Agent.Unlock`).
    public var rawValue: String { "\(interface).\(member)" }

    /// Every method by its name, for ``named(_:)``.
    private static let byName: [String: Method] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The method called `name`, or nil: one hash lookup (the agent looks up every call's method this way).
    public static func named(_ name: String) -> Method? { byName[name] }

    /// The method called `name`, or nil (as ``named(_:)``).
    public init?(rawValue: String) {
        guard let method = Self.named(rawValue) else { return nil }
        self = method
    }
}

// MARK: - Clients' names

/// The names clients call methods by (`control.call(.getKey, …)`), one per method.
extension Method {
    public static let getInfo = Method.service(.getInfo)
    public static let getInterfaceDescription = Method.service(.getInterfaceDescription)
    public static let getStatus = Method.agent(.getStatus)
    public static let initialize = Method.agent(.initialize)
    public static let unlock = Method.agent(.unlock)
    public static let lock = Method.agent(.lock)
    public static let logout = Method.agent(.logout)
    public static let changePasscode = Method.agent(.changePasscode)
    public static let wipe = Method.agent(.wipe)
    public static let listApps = Method.agent(.listApps)
    public static let recover = Method.agent(.recover)
    public static let unlockWithFingerprint = Method.agent(.unlockWithFingerprint)
    public static let setBiometrics = Method.agent(.setBiometrics)
    public static let register = Method.app(.register)
    public static let subscribe = Method.app(.subscribe)
    public static let acknowledge = Method.app(.acknowledge)
    public static let getKey = Method.app(.getKey)
    public static let reportActivity = Method.app(.reportActivity)
    public static let requestUnlock = Method.app(.requestUnlock)
    public static let shareDocument = Method.app(.shareDocument)
    public static let openDocument = Method.app(.openDocument)
    public static let check = Method.app(.check)
    public static let getNetworkPolicy = Method.app(.getNetworkPolicy)
    public static let reportChannelCuts = Method.app(.reportChannelCuts)
    public static let copy = Method.pasteboard(.copy)
    public static let paste = Method.pasteboard(.paste)
    public static let clear = Method.pasteboard(.clear)
    public static let getEffectivePolicy = Method.policy(.getEffective)
    public static let validatePolicy = Method.policy(.validate)
    public static let explainPolicy = Method.policy(.explain)
    public static let reloadPolicy = Method.policy(.reload)
    public static let getPolicyStatus = Method.policy(.getStatus)
    public static let queryAudit = Method.audit(.query)
    public static let followAudit = Method.audit(.follow)
    public static let getPosture = Method.posture(.get)
    public static let postureReport = Method.posture(.report)
    public static let postureKey = Method.posture(.getKey)
    public static let storagePut = Method.storage(.put)
    public static let storageGet = Method.storage(.get)
    public static let storageDelete = Method.storage(.delete)
    public static let storageList = Method.storage(.list)
    public static let storageUsage = Method.storage(.usage)
    public static let storageWipeApp = Method.storage(.wipeApp)
    public static let storageExportIdentity = Method.storage(.exportIdentity)
    public static let tokenImport = Method.tokens(.import)
    public static let tokenList = Method.tokens(.list)
    public static let tokenCode = Method.tokens(.code)
    public static let tokenRename = Method.tokens(.rename)
    public static let tokenRemove = Method.tokens(.remove)
    public static let tokenReset = Method.tokens(.reset)
    public static let identityGetToken = Method.identity(.getToken)
    public static let identitySignIn = Method.identity(.signIn)
    public static let identitySignOut = Method.identity(.signOut)
    public static let identityStatus = Method.identity(.status)
}
