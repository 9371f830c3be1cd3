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
    case openDocument = "io.cordon.App.OpenDocument"
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
    case getPosture = "io.cordon.Posture.Get"
    case postureReport = "io.cordon.Posture.Report"
    case postureKey = "io.cordon.Posture.GetKey"
    // MARK: Storage (#13)
    case storagePut = "io.cordon.Storage.Put"
    case storageGet = "io.cordon.Storage.Get"
    case storageDelete = "io.cordon.Storage.Delete"
    case storageList = "io.cordon.Storage.List"
    case storageUsage = "io.cordon.Storage.Usage"
    case storageWipeApp = "io.cordon.Storage.WipeApp"
    case storageExportIdentity = "io.cordon.Storage.ExportIdentity"
    // MARK: Tokens (#14)
    case tokenImport = "io.cordon.Tokens.Import"
    case tokenList = "io.cordon.Tokens.List"
    case tokenCode = "io.cordon.Tokens.Code"
    case tokenRename = "io.cordon.Tokens.Rename"
    case tokenRemove = "io.cordon.Tokens.Remove"
    case tokenReset = "io.cordon.Tokens.Reset"
    // MARK: Recovery key (#12)
    case recover = "io.cordon.Agent.Recover"
    // MARK: Fingerprint unlock (#15)
    case unlockWithFingerprint = "io.cordon.Agent.UnlockWithFingerprint"
    case setBiometrics = "io.cordon.Agent.SetBiometrics"
    // MARK: Identity broker (#15)
    case identityGetToken = "io.cordon.Identity.GetToken"
    case identitySignIn = "io.cordon.Identity.SignIn"
    case identitySignOut = "io.cordon.Identity.SignOut"
    case identityStatus = "io.cordon.Identity.Status"
    // MARK: Pinned channel (docs/ARCHITECTURE.md, "Pinned channel")
    case getNetworkPolicy = "io.cordon.App.GetNetworkPolicy"
}

extension Method {
    /// Every method by its name, for ``named(_:)``.
    private static let byName: [String: Method] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The method called `name`, or nil: one hash lookup, where `init(rawValue:)` compares the
    /// name with each case's in turn (the agent looks up every call's method this way).
    public static func named(_ name: String) -> Method? { byName[name] }
}
