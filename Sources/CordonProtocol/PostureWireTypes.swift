/// One device posture check (`io.cordon.Posture`; docs/ARCHITECTURE.md, "Posture").
public enum PostureCheck: String, Sendable, CaseIterable, Codable {
    /// UEFI Secure Boot is enabled (the `SecureBoot` EFI variable).
    case secureBoot
    /// The kernel is locked down (`/sys/kernel/security/lockdown`: integrity or confidentiality).
    case kernelLockdown
    /// The root file system sits on dm-crypt (LUKS), directly or under LVM.
    case diskEncryption
    /// The desktop locks the screen when the screen saver starts.
    case screenLock
    /// The kernel is not tainted (no proprietary, out-of-tree, unsigned or forced modules).
    case kernelTaint
    /// Yama restricts `ptrace` (`ptrace_scope` ≥ 1): a process cannot attach to its siblings.
    case ptraceScope
    /// The operating system is at least the version the policy names.
    case osVersion
    /// The kernel is at least the version the policy names.
    case kernelVersion
}

/// What a check found.
public enum PostureStatus: String, Sendable, Codable, Equatable {
    case pass
    case fail
    /// The machine cannot answer (no EFI, no securityfs, no such setting): never counted as a pass.
    case unknown
}

/// A check's outcome and the evidence it was decided on.
public struct PostureResult: Sendable, Codable, Equatable {
    public var check: PostureCheck
    public var status: PostureStatus
    /// What was read, where (`/sys/kernel/security/lockdown: [none] integrity`).
    public var evidence: String

    public init(_ check: PostureCheck, _ status: PostureStatus, _ evidence: String) {
        self.check = check
        self.status = status
        self.evidence = evidence
    }
}

/// `io.cordon.Posture.Get`'s reply: every check, in `PostureCheck` order.
public struct PostureReply: Sendable, Codable, Equatable {
    public var checks: [PostureResult]
    public init(checks: [PostureResult]) { self.checks = checks }
}
