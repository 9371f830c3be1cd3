/// One policy file (`schema: "cordon.policy.v1"`), as parsed. Every key is optional: a file
/// sets only what it means to set; the effective policy merges all files, most restrictive wins.
public struct PolicyDocument: Sendable, Equatable {
    /// The schema identifier; always `cordon.policy.v1` for this version.
    public var schema: String
    public var apps: AppsSection?
    public var passcode: PasscodeSection?
    public var lock: LockSection?
    public var pasteboard: PasteboardSection?
    public var documents: DocumentsSection?
    public var storage: StorageSection?
    public var conditions: ConditionsSection?
    /// Per-app sections, applied (most restrictive wins) on top of the base for those apps.
    public var overrides: [PolicyOverride]

    public static let schemaIdentifier = "cordon.policy.v1"

    public init(
        schema: String = PolicyDocument.schemaIdentifier, apps: AppsSection? = nil, passcode: PasscodeSection? = nil,
        lock: LockSection? = nil, pasteboard: PasteboardSection? = nil, documents: DocumentsSection? = nil,
        storage: StorageSection? = nil, conditions: ConditionsSection? = nil, overrides: [PolicyOverride] = []
    ) {
        self.schema = schema
        self.apps = apps
        self.passcode = passcode
        self.lock = lock
        self.pasteboard = pasteboard
        self.documents = documents
        self.storage = storage
        self.conditions = conditions
        self.overrides = overrides
    }
}

/// `apps`: which app ids are managed, bound to executables; what unknown clients get.
public struct AppsSection: Sendable, Equatable {
    public var managed: [ManagedApp]?
    public var unknown: UnknownAppAction?
    public init(managed: [ManagedApp]? = nil, unknown: UnknownAppAction? = nil) {
        self.managed = managed
        self.unknown = unknown
    }
}

/// A managed app: its id, the executables allowed to register as it, optionally their digests.
public struct ManagedApp: Sendable, Equatable {
    public var id: String
    /// Absolute paths; a registering client's executable must be one of them.
    public var executables: [String]
    /// Lower-case hex SHA-256 digests; when present, the executable's digest must be one of them.
    public var sha256: [String]
    public init(id: String, executables: [String], sha256: [String] = []) {
        self.id = id
        self.executables = executables
        self.sha256 = sha256
    }
}

/// `passcode`: rules for the passcode and what happens after too many failures.
public struct PasscodeSection: Sendable, Equatable {
    public var minLength: Int?
    public var kind: PasscodeKind?
    /// Whether simple sequences (1234, 1111, abcd) are allowed.
    public var allowSimple: Bool?
    public var maxAttempts: Int?
    public var onMaxAttempts: MaxAttemptsAction?
    public init(
        minLength: Int? = nil, kind: PasscodeKind? = nil, allowSimple: Bool? = nil, maxAttempts: Int? = nil,
        onMaxAttempts: MaxAttemptsAction? = nil
    ) {
        self.minLength = minLength
        self.kind = kind
        self.allowSimple = allowSimple
        self.maxAttempts = maxAttempts
        self.onMaxAttempts = onMaxAttempts
    }
}

/// `lock`: when the container locks and what a late acknowledgement costs an app.
public struct LockSection: Sendable, Equatable {
    /// Seconds without activity before the lock; 0 disables the idle lock (the loosest value).
    public var idleTimeoutSeconds: Int?
    /// Lock when the screen locks.
    public var onScreenLock: Bool?
    /// Lock when the machine suspends.
    public var onSuspend: Bool?
    public var reauthGraceSeconds: Int?
    public var discardKeyOnLock: Bool?
    public var ackDeadlineMs: Int?
    public var onAckTimeout: AckTimeoutAction?
    public init(
        idleTimeoutSeconds: Int? = nil, onScreenLock: Bool? = nil, onSuspend: Bool? = nil,
        reauthGraceSeconds: Int? = nil, discardKeyOnLock: Bool? = nil, ackDeadlineMs: Int? = nil,
        onAckTimeout: AckTimeoutAction? = nil
    ) {
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.onScreenLock = onScreenLock
        self.onSuspend = onSuspend
        self.reauthGraceSeconds = reauthGraceSeconds
        self.discardKeyOnLock = discardKeyOnLock
        self.ackDeadlineMs = ackDeadlineMs
        self.onAckTimeout = onAckTimeout
    }
}

/// `pasteboard`: where copied content may go (Intune's clipboard levels).
public struct PasteboardSection: Sendable, Equatable {
    public var copyOut: PasteboardLevel?
    /// The most characters pasted into another app; longer content is truncated (an obligation).
    public var maxChars: Int?
    public var clearOnLock: Bool?
    public init(copyOut: PasteboardLevel? = nil, maxChars: Int? = nil, clearOnLock: Bool? = nil) {
        self.copyOut = copyOut
        self.maxChars = maxChars
        self.clearOnLock = clearOnLock
    }
}

/// `documents`: sending, receiving and saving documents (Intune's "send org data to" & co).
public struct DocumentsSection: Sendable, Equatable {
    public var sendTo: ShareScope?
    public var receiveFrom: ShareScope?
    /// When set, sending is allowed only to these app ids (an allow-list: lists intersect).
    public var allowedTargets: [String]?
    /// When set, receiving is allowed only from these app ids.
    public var allowedSources: [String]?
    public var saveCopies: SaveCopies?
    /// When set, saving is allowed only under paths matching one of these globs.
    public var saveLocations: [String]?
    /// MIME types (`application/pdf`, `image/*`) or extensions (`.exe`) never sent, received or saved.
    public var blockedTypes: [String]?
    public init(
        sendTo: ShareScope? = nil, receiveFrom: ShareScope? = nil, allowedTargets: [String]? = nil,
        allowedSources: [String]? = nil, saveCopies: SaveCopies? = nil, saveLocations: [String]? = nil,
        blockedTypes: [String]? = nil
    ) {
        self.sendTo = sendTo
        self.receiveFrom = receiveFrom
        self.allowedTargets = allowedTargets
        self.allowedSources = allowedSources
        self.saveCopies = saveCopies
        self.saveLocations = saveLocations
        self.blockedTypes = blockedTypes
    }
}

/// `storage`: when app data may be read.
public struct StorageSection: Sendable, Equatable {
    public var dataAccess: DataAccess?
    public init(dataAccess: DataAccess? = nil) { self.dataAccess = dataAccess }
}

/// `conditions`: conditional launch, as Intune's: what a detected condition triggers.
public struct ConditionsSection: Sendable, Equatable {
    public var debuggerAttached: ConditionAction?
    public var preloadInjected: ConditionAction?
    public var executableMismatch: ConditionAction?
    public init(
        debuggerAttached: ConditionAction? = nil, preloadInjected: ConditionAction? = nil,
        executableMismatch: ConditionAction? = nil
    ) {
        self.debuggerAttached = debuggerAttached
        self.preloadInjected = preloadInjected
        self.executableMismatch = executableMismatch
    }
}

/// `overrides[i]`: sections that apply only to the listed apps (they can only tighten).
public struct PolicyOverride: Sendable, Equatable {
    public var apps: [String]
    public var lock: LockSection?
    public var pasteboard: PasteboardSection?
    public var documents: DocumentsSection?
    public var storage: StorageSection?
    public var conditions: ConditionsSection?
    public init(
        apps: [String], lock: LockSection? = nil, pasteboard: PasteboardSection? = nil,
        documents: DocumentsSection? = nil, storage: StorageSection? = nil, conditions: ConditionsSection? = nil
    ) {
        self.apps = apps
        self.lock = lock
        self.pasteboard = pasteboard
        self.documents = documents
        self.storage = storage
        self.conditions = conditions
    }
}
