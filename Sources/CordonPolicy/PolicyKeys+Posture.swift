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
        PostureCheck.allCases.map { setting(for: $0) } + [postureUnknown, minimumVersions]
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

extension PolicyKeys.Conditions {
    /// The lowest versions the `osVersion` and `kernelVersion` checks accept: `"kernel 6.1"`, or an
    /// `os-release` `ID` and `VERSION_ID` (`"debian 12"`). Device-wide; files combine, and for each
    /// name the highest minimum wins.
    public static let minimumVersions = PolicySetting<[String], Set<String>?>(
        section, "minimumVersions", scope: .global,
        .strings(.minimumVersion, noun: "minimum versions", item: "a name and a dotted version"),
        resolve: { MinimumVersions.normalized(Set($0)) }, merge: .combine(MinimumVersions.combine), unset: nil,
        builtin: [],
        summary:
            "The lowest versions the osVersion and kernelVersion checks accept: \"kernel 6.1\" or an os-release ID and VERSION_ID (\"debian 12\"); for each name the highest minimum of all files wins."
    )
}

extension StringPattern {
    /// `kernel 6.1`, `debian 12`: a lower-case os-release ID (or `kernel`), a space, a dotted version.
    static let minimumVersion = StringPattern(
        expected: "a name and a dotted version (\"kernel 6.1\", \"debian 12\")",
        accepts: { MinimumVersions.split($0) != nil },
        regex: "^[a-z0-9][a-z0-9._-]* [0-9]+(\\.[0-9]+)*$")
}

/// `conditions.minimumVersions`: entries `NAME VERSION`, merged so that each name keeps its highest.
public enum MinimumVersions {
    /// The name and the version's numbers of an entry, or nil when it is not one.
    public static func split(_ entry: String) -> (name: String, version: String)? {
        let parts = entry.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = parts[0].first, first.isASCII, first.isLetter || first.isNumber,
            parts[0].allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || "._-".contains($0)) }),
            !parts[1].isEmpty,
            parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ part in
                !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber }
            })
        else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// Each name's highest minimum (a tie of equal numbers keeps the larger spelling, so merging
    /// stays commutative).
    static func normalized(_ entries: Set<String>) -> Set<String> {
        var highest: [String: String] = [:]
        for entry in entries {
            guard let (name, version) = split(entry) else { continue }
            if let current = highest[name], !isHigher(version, than: current) { continue }
            highest[name] = version
        }
        return Set(highest.map { "\($0.key) \($0.value)" })
    }

    @Sendable static func combine(_ lhs: Set<String>?, _ rhs: Set<String>?) -> Set<String>? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return normalized(lhs.union(rhs))
    }

    /// Whether `version` is above `other`, number by number; equal numbers compare by spelling.
    static func isHigher(_ version: String, than other: String) -> Bool {
        let left = version.split(separator: ".").map { Int($0) ?? 0 }
        let right = other.split(separator: ".").map { Int($0) ?? 0 }
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            if a != b { return a > b }
        }
        return version > other
    }

    /// The minimums as a dictionary: name → version (`kernel` is the kernel's).
    public static func table(_ entries: Set<String>?) -> [String: String] {
        var table: [String: String] = [:]
        for entry in entries ?? [] {
            if let (name, version) = split(entry) { table[name] = version }
        }
        return table
    }
}
