import CordonProtocol

extension PolicyKeys.Conditions {
    /// What a failing Secure Boot check triggers.
    public static let secureBoot = posture(.secureBoot, "Secure Boot is off")
    /// What a failing kernel lockdown check triggers.
    public static let kernelLockdown = posture(.kernelLockdown, "the kernel is not locked down")
    /// What a root file system without dm-crypt triggers.
    public static let diskEncryption = posture(.diskEncryption, "the root file system is not encrypted")
    /// What a desktop without a screen lock triggers.
    public static let screenLock = posture(.screenLock, "the desktop does not lock the screen")
    /// What a tainted kernel triggers.
    public static let kernelTaint = posture(.kernelTaint, "the kernel is tainted")
    /// What an unrestricted ptrace scope triggers.
    public static let ptraceScope = posture(.ptraceScope, "Yama does not restrict ptrace (ptrace_scope 0)")
    /// What an operating system below its minimum triggers.
    public static let osVersion = posture(.osVersion, "the operating system is below its minimum version")
    /// What a kernel below its minimum triggers.
    public static let kernelVersion = posture(.kernelVersion, "the kernel is below its minimum version")
    /// How a check the machine cannot answer counts; `fail` is stricter.
    public static let postureUnknown = PolicySetting<PostureUnknown, PostureUnknown>(
        section, "postureUnknown", scope: .perApp, .choice([.pass, .fail]), merge: .stricter(Stricter.level),
        unset: .pass, builtin: .fail,
        summary:
            "How a posture check the machine cannot answer counts for the checks above: \"fail\" (their action applies) or \"pass\"."
    )

    /// The setting of each posture check.
    public static func setting(for check: PostureCheck) -> PolicySetting<PostureAction, PostureAction> {
        switch check {
        case .secureBoot: return secureBoot
        case .kernelLockdown: return kernelLockdown
        case .diskEncryption: return diskEncryption
        case .screenLock: return screenLock
        case .kernelTaint: return kernelTaint
        case .ptraceScope: return ptraceScope
        case .osVersion: return osVersion
        case .kernelVersion: return kernelVersion
        }
    }

    static var postureSettings: [any AnyPolicySetting] {
        PostureCheck.allCases.map { setting(for: $0) } + [postureUnknown]
    }

    /// A posture check's action: `ignore`, `warn`, `block` or `wipe`; the strictest wins. The
    /// built-in default is `ignore`: most Linux machines fail or cannot answer some check (no
    /// Secure Boot in a VM, no lockdown, a tainted kernel from a vendor driver, ptrace scope 0),
    /// so any other default would warn on nearly every machine; an administrator opts in per check.
    private static func posture(_ check: PostureCheck, _ what: String) -> PolicySetting<PostureAction, PostureAction> {
        PolicySetting(
            section, check.rawValue, scope: .perApp, .choice([.ignore, .warn, .block, .wipe]),
            merge: .stricter(Stricter.level), unset: .ignore, builtin: .ignore,
            summary:
                "Device posture: \(what) (`cordon posture`): \"ignore\", \"warn\" (a PostureWarning event), \"block\" (refuse the registration, revoke a registered app's key) or \"wipe\" (erase the app's data, and block)."
        )
    }
}
