import CordonProtocol

/// Facts about an app taking part in a decision.
public struct AppFacts: Sendable, Hashable {
    public var id: String
    public var managed: Bool
    public init(id: String, managed: Bool) {
        self.id = id
        self.managed = managed
    }
}

/// A question to the policy: may `app` do `action` (with `peer`, at `location`, of `contentType`)?
public struct DecisionRequest: Sendable, Hashable {
    public var action: PolicyAction
    /// The app asking (the one copying, pasting, sending, receiving or saving).
    public var app: AppFacts
    /// The other app: the paste's source, the send's target, the receive's source. Nil for an
    /// unmanaged client or the system.
    public var peer: AppFacts?
    /// For `document.save`: the destination path.
    public var location: String?
    /// For documents: a MIME type or a file name / extension.
    public var contentType: String?
    /// For the pasteboard: the content's length in characters.
    public var length: Int?

    public init(
        action: PolicyAction, app: AppFacts, peer: AppFacts? = nil, location: String? = nil,
        contentType: String? = nil, length: Int? = nil
    ) {
        self.action = action
        self.app = app
        self.peer = peer
        self.location = location
        self.contentType = contentType
        self.length = length
    }
}

/// Something the caller must do when an action is allowed.
public enum Obligation: Sendable, Hashable {
    /// Truncate the content to this many characters.
    case truncate(maxChars: Int)
}

/// The answer: allowed or not, why, and which rules decided.
public struct PolicyDecision: Sendable, Hashable {
    public var allowed: Bool
    public var action: PolicyAction
    /// A sentence for users and the audit log, e.g. "pasteboard copyOut is managed: …".
    public var reason: String
    public var obligations: [Obligation]
    /// The rules (file + pointer) that produced this decision.
    public var rules: [RuleReference]

    public init(
        allowed: Bool, action: PolicyAction, reason: String, obligations: [Obligation] = [],
        rules: [RuleReference]
    ) {
        self.allowed = allowed
        self.action = action
        self.reason = reason
        self.obligations = obligations
        self.rules = rules
    }
}

/// Facts about a client registering as an app (`app.register`).
public struct RegistrationFacts: Sendable, Hashable {
    public var appId: String
    public var executable: String
    /// Lower-case hex SHA-256 of the executable, when computed.
    public var sha256: String?
    public var debuggerAttached: Bool
    public var preloadInjected: Bool
    /// How code is injected, when it is (`LD_AUDIT is set`), for the reason.
    public var injection: String?
    /// Whether the client runs in a user namespace its own user made (where it may have mounted
    /// anything over its files): a binding by executable path does not match it.
    public var inUserMadeNamespace: Bool
    /// The client's Flatpak sandbox, when it claims one: verified (the app id) or why not.
    public var sandbox: SandboxFact?
    public init(
        appId: String, executable: String, sha256: String? = nil, debuggerAttached: Bool = false,
        preloadInjected: Bool = false, injection: String? = nil, inUserMadeNamespace: Bool = false,
        sandbox: SandboxFact? = nil
    ) {
        self.appId = appId
        self.executable = executable
        self.sha256 = sha256
        self.debuggerAttached = debuggerAttached
        self.preloadInjected = preloadInjected || injection != nil
        self.injection = injection
        self.inUserMadeNamespace = inUserMadeNamespace
        self.sandbox = sandbox
    }
}

/// What the agent found of a registering client's Flatpak sandbox (docs/THREAT-MODEL.md,
/// "Sandboxed apps").
public enum SandboxFact: Sendable, Hashable {
    /// The client is verifiably this Flatpak app of a system installation.
    case flatpak(appId: String)
    /// The client claims a Flatpak sandbox that does not verify: why.
    case unverified(String)
}

/// The answer to a registration.
public struct RegistrationDecision: Sendable, Hashable {
    public enum Outcome: String, Sendable, Hashable {
        /// Registered managed: it receives its key.
        case managed
        /// Registered unmanaged: state events only, no key.
        case unmanaged
        /// Refused.
        case refused
    }

    public var outcome: Outcome
    /// A condition's action `wipe` fired: the agent must wipe the container.
    public var wipe: Bool
    /// Conditions with action `warn` that fired (reported, not enforced).
    public var warnings: [String]
    public var reason: String
    public var rules: [RuleReference]

    public init(outcome: Outcome, wipe: Bool = false, warnings: [String] = [], reason: String, rules: [RuleReference]) {
        self.outcome = outcome
        self.wipe = wipe
        self.warnings = warnings
        self.reason = reason
        self.rules = rules
    }
}
