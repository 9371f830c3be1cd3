import CordonProtocol

/// A value with a strictness order: merging keeps the most restrictive.
public protocol Restrictiveness: Sendable, Equatable {
    /// Higher is stricter.
    var strictness: Int { get }
}

extension Restrictiveness {
    /// The stricter of two values (`self` on a tie).
    public func stricter(_ other: Self) -> Self { other.strictness > strictness ? other : self }
}

/// What a client that no managed app binding matches gets.
public enum UnknownAppAction: String, Sendable, CaseIterable, Restrictiveness {
    /// Every unbound app is managed and gets its key: any same-user program can claim any app id.
    /// Only for machines where every program the user runs is trusted (docs/THREAT-MODEL.md).
    case trusted
    /// State events, no key.
    case unmanaged
    /// The registration is refused.
    case refuse
    public var strictness: Int {
        switch self {
        case .trusted: return 0
        case .unmanaged: return 1
        case .refuse: return 2
        }
    }
}

/// Which characters a passcode must use.
public enum PasscodeKind: String, Sendable, CaseIterable, Restrictiveness {
    case numeric, alphanumeric
    public var strictness: Int { self == .alphanumeric ? 1 : 0 }
}

extension MaxAttemptsAction: Restrictiveness {
    public var strictness: Int { self == .wipe ? 1 : 0 }
}

/// What an app that misses its acknowledgement deadline gets.
public enum AckTimeoutAction: String, Sendable, CaseIterable, Restrictiveness {
    case report, disconnect, freeze, terminate
    public var strictness: Int {
        switch self {
        case .report: return 0
        case .disconnect: return 1
        case .freeze: return 2
        case .terminate: return 3
        }
    }
}

/// Intune's clipboard levels, loosest first.
public enum PasteboardLevel: String, Sendable, CaseIterable, Restrictiveness {
    case any, managedWithPasteIn, managed, blocked
    public var strictness: Int {
        switch self {
        case .any: return 0
        case .managedWithPasteIn: return 1
        case .managed: return 2
        case .blocked: return 3
        }
    }
}

/// Where documents may go or come from.
public enum ShareScope: String, Sendable, CaseIterable, Restrictiveness {
    case any, managed, none
    public var strictness: Int {
        switch self {
        case .any: return 0
        case .managed: return 1
        case .none: return 2
        }
    }
}

/// Whether copies may be saved.
public enum SaveCopies: String, Sendable, CaseIterable, Restrictiveness {
    case allow, block
    public var strictness: Int { self == .block ? 1 : 0 }
}

/// When app data may be read.
public enum DataAccess: String, Sendable, CaseIterable, Restrictiveness {
    case afterFirstUnlock, whenUnlocked
    public var strictness: Int { self == .whenUnlocked ? 1 : 0 }
}

/// What a detected condition triggers: wipe > block > warn.
public enum ConditionAction: String, Sendable, CaseIterable, Restrictiveness {
    case warn, block, wipe
    public var strictness: Int {
        switch self {
        case .warn: return 0
        case .block: return 1
        case .wipe: return 2
        }
    }
}

/// What a failing device posture check triggers (`conditions`; docs/ARCHITECTURE.md, "Posture"):
/// wipe > block > warn > ignore.
public enum PostureAction: String, Sendable, CaseIterable, Restrictiveness {
    /// Nothing: the check is read and reported, never acted on.
    case ignore
    /// A `PostureWarning` event to the app, audited.
    case warn
    /// Registration refused; a registered app's key revoked.
    case block
    /// The app's data crypto-erased (selective wipe), and blocked.
    case wipe
    public var strictness: Int {
        switch self {
        case .ignore: return 0
        case .warn: return 1
        case .block: return 2
        case .wipe: return 3
        }
    }
}

/// How a posture check the machine cannot answer counts: `fail` is stricter.
public enum PostureUnknown: String, Sendable, CaseIterable, Restrictiveness {
    case pass, fail
    public var strictness: Int { self == .fail ? 1 : 0 }
}

/// What a stale fleet policy triggers (`conditions.policyStale`; docs/ARCHITECTURE.md, "Fleet
/// commands in the agent"): lock > block > warn > off.
public enum PolicyStaleAction: String, Sendable, CaseIterable, Restrictiveness {
    /// Nothing: the staleness is shown in `cordon status`, never acted on.
    case off
    /// Shown in `cordon status` and `doctor`, audited when it starts.
    case warn
    /// Every policy decision is denied while stale.
    case block
    /// The container is locked, and locked again at every unlock, while stale.
    case lock
    public var strictness: Int {
        switch self {
        case .off: return 0
        case .warn: return 1
        case .block: return 2
        case .lock: return 3
        }
    }
}
