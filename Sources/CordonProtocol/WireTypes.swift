import Foundation

/// The agent's status (`io.cordon.Agent.GetStatus`).
public struct AgentStatus: Sendable, Codable, Equatable {
    public var state: LifecycleState
    public var seq: Int
    public var failedAttempts: Int
    public var maxAttempts: Int
    public var retryAfterSeconds: Double
    public var idleTimeoutSeconds: Int
    public var reauthGraceSeconds: Int
    public var ackDeadlineMs: Int
    public var apps: Int
    public var version: String
    /// True when the daemon runs with the insecure fast KDF (tests only).
    public var insecureKDF: Bool
    /// The lock triggers in force (logind, screen savers); empty when no bus could be reached.
    /// Absent from agents that predate lock triggers.
    public var lockTriggers: [String]?
    /// Set while audit records cannot be stored (a full disk, say); absent when they are.
    public var auditProblem: AuditProblem?
    /// Set when the agent runs in test mode: its admin inputs (policy and trust directories,
    /// lifecycle values, the fast KDF) came from flags or environment. Absent otherwise.
    public var testMode: Bool?
    /// What protects the master key and the TPM's lockout state; absent from agents that predate
    /// TPM sealing and before initialisation.
    public var keyProtection: KeyProtectionStatus?
    /// What reaching `maxAttempts` does (`passcode.onMaxAttempts`: `wipe` or `lockout`); absent from
    /// agents that predate it.
    public var onMaxAttempts: String?
    /// The fleet (cordon-fleetd's directory), while it exists; absent otherwise and from agents
    /// that predate it.
    public var fleet: FleetStatus?

    public init(
        state: LifecycleState, seq: Int, failedAttempts: Int, maxAttempts: Int, retryAfterSeconds: Double,
        idleTimeoutSeconds: Int, reauthGraceSeconds: Int, ackDeadlineMs: Int, apps: Int, version: String,
        insecureKDF: Bool, lockTriggers: [String]? = nil, auditProblem: AuditProblem? = nil, testMode: Bool? = nil,
        keyProtection: KeyProtectionStatus? = nil, onMaxAttempts: String? = nil, fleet: FleetStatus? = nil
    ) {
        self.fleet = fleet
        self.onMaxAttempts = onMaxAttempts
        self.keyProtection = keyProtection
        self.testMode = testMode
        self.lockTriggers = lockTriggers
        self.auditProblem = auditProblem
        self.state = state
        self.seq = seq
        self.failedAttempts = failedAttempts
        self.maxAttempts = maxAttempts
        self.retryAfterSeconds = retryAfterSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.reauthGraceSeconds = reauthGraceSeconds
        self.ackDeadlineMs = ackDeadlineMs
        self.apps = apps
        self.version = version
        self.insecureKDF = insecureKDF
    }
}

/// What protects the master key (`software`, `tpm`, `tpm+pcrs`) and, when a TPM seals it, the TPM's
/// dictionary-attack state as the TPM reports it.
public struct KeyProtectionStatus: Sendable, Codable, Equatable {
    public var kind: String
    /// The PCRs the seal is bound to.
    public var pcrs: [Int]?
    /// Wrong passcodes the TPM accepts before its lockout.
    public var attemptsLeft: Int?
    /// The TPM's threshold (TPM_PT_MAX_AUTH_FAIL).
    public var maxFailures: Int?
    /// Whether the TPM is in lockout.
    public var inLockout: Bool?
    /// Seconds until the TPM forgets one failure (its lockout interval) while in lockout.
    public var retryAfterSeconds: Double?
    /// Why the TPM's state could not be read.
    public var problem: String?
    /// The policy prefers a TPM and none protects the key.
    public var warning: String?
    /// The TPM counter the security state is anchored to ("TPM NV counter 0x01234567"), nil when no
    /// TPM anchors it (docs/THREAT-MODEL.md, "State the user cannot roll back").
    public var stateAnchor: String?

    public init(
        kind: String, pcrs: [Int]? = nil, attemptsLeft: Int? = nil, maxFailures: Int? = nil, inLockout: Bool? = nil,
        retryAfterSeconds: Double? = nil, problem: String? = nil, warning: String? = nil, stateAnchor: String? = nil
    ) {
        self.stateAnchor = stateAnchor
        self.kind = kind
        self.pcrs = pcrs
        self.attemptsLeft = attemptsLeft
        self.maxFailures = maxFailures
        self.inLockout = inLockout
        self.retryAfterSeconds = retryAfterSeconds
        self.problem = problem
        self.warning = warning
    }
}

/// Audit records the agent could not store: since when, how many (they are in its log only),
/// and the last error.
public struct AuditProblem: Sendable, Codable, Equatable {
    /// When the first write failed (seconds since 1970).
    public var since: Double
    /// Records that went to the agent's log only.
    public var unstored: Int
    public var error: String

    public init(since: Double, unstored: Int, error: String) {
        self.since = since
        self.unstored = unstored
        self.error = error
    }
}

/// A registered app (`io.cordon.Agent.ListApps`).
public struct AppInfo: Sendable, Codable, Equatable {
    public var appId: String
    public var pid: Int
    public var executable: String
    public var managed: Bool
    public var subscribed: Bool
    public var compliance: Compliance
    public var pendingSeq: Int?
    public var lastAckSeq: Int?
    /// How the agent froze the app for a missed deadline (set while `compliance` is `frozen`).
    public var freezeMethod: FreezeMethod?
    /// What the agent read of the app's process when it answered (`/proc`, `cgroup.events`).
    public var processState: ProcessState?
    /// The app's own cgroup, the agent freezes and kills it through (a path in the cgroup2
    /// hierarchy), when it has one.
    public var cgroup: String?
    /// How many times the agent found the app resumed while it should be frozen and froze it
    /// again (since its last freeze).
    public var resumesUndone: Int?

    public init(
        appId: String, pid: Int, executable: String, managed: Bool, subscribed: Bool, compliance: Compliance,
        pendingSeq: Int?, lastAckSeq: Int?, freezeMethod: FreezeMethod? = nil, processState: ProcessState? = nil,
        cgroup: String? = nil, resumesUndone: Int? = nil
    ) {
        self.appId = appId
        self.pid = pid
        self.executable = executable
        self.managed = managed
        self.subscribed = subscribed
        self.compliance = compliance
        self.pendingSeq = pendingSeq
        self.lastAckSeq = lastAckSeq
        self.freezeMethod = freezeMethod
        self.processState = processState
        self.cgroup = cgroup
        self.resumesUndone = resumesUndone
    }
}

/// How an app is frozen: its own cgroup (`cgroup.freeze`: children and `setsid` escapes too, and
/// SIGCONT does not thaw it), or SIGSTOP to its process group.
public enum FreezeMethod: String, Sendable, Codable, CaseIterable {
    case cgroup
    case signals
}

/// An app's process as the agent reads it when answering `ListApps`.
public enum ProcessState: String, Sendable, Codable, CaseIterable {
    /// Running (or sleeping).
    case running
    /// Stopped by SIGSTOP.
    case stopped
    /// Frozen through its cgroup (`cgroup.events`: `frozen 1`).
    case frozen
    /// Asked to freeze, not frozen yet.
    case freezing
    /// The process has exited.
    case exited
}

/// A document handed from one app to another (`OpenDocument`).
public struct DocumentInfo: Sendable, Codable, Equatable {
    /// The file's absolute path.
    public var path: String
    /// Its MIME type, when the sender gave one.
    public var contentType: String?
    /// The app id of the sender.
    public var sender: String
    /// What `io.cordon.App.OpenDocument` takes to hand over the file as an open descriptor.
    public var id: String?

    public init(path: String, contentType: String?, sender: String, id: String? = nil) {
        self.path = path
        self.contentType = contentType
        self.sender = sender
        self.id = id
    }
}
