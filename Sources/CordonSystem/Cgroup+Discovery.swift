import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Finding cgroups: the cgroup2 mount (`/proc/self/mountinfo`), a process's cgroup (the `0::` line
/// of `/proc/PID/cgroup`, as the kernel reports it) and the delegated parent `cordon run` creates
/// apps' cgroups in (docs/ARCHITECTURE.md, "Freezing").
extension Cgroup {
    /// The environment variable that overrides the delegated parent: a directory of the cgroup2
    /// hierarchy, or `none` to freeze with signals.
    public static let parentEnvironmentKey = "CORDON_CGROUP_PARENT"

    /// The cgroup2 hierarchy's mount point and the hierarchy path mounted there (its root field),
    /// from the text of a `mountinfo` file; nil without a cgroup2 mount.
    public static func unifiedMount(mountinfo: String) -> (mountPoint: String, root: String)? {
        for line in mountinfo.split(separator: "\n") {
            // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTIONS
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].split(separator: " ").first == "cgroup2" else { continue }
            let fields = halves[0].split(separator: " ")
            guard fields.count >= 5 else { continue }
            return (unescape(fields[4]), unescape(fields[3]))
        }
        return nil
    }

    /// The cgroup v2 path in the text of a `/proc/PID/cgroup` file (its `0::` line), or nil.
    public static func unifiedPath(procCgroup: String) -> String? {
        for line in procCgroup.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            // A cgroup removed under the process reads "/… (deleted)".
            return path.hasPrefix("/") && !path.hasSuffix(" (deleted)") ? path : nil
        }
        return nil
    }

    /// The cgroup2 mount of this process's mount namespace, or nil.
    public static func unifiedMount() -> (mountPoint: String, root: String)? {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        return unifiedMount(mountinfo: text)
    }

    /// The cgroup `pid` is in, from `/proc/PID/cgroup`; nil without cgroup2 or when unreadable.
    /// A caller holding a pidfd checks it is still alive after this read.
    public static func of(pid: Int32) -> Cgroup? {
        guard let mount = unifiedMount(),
            let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8),
            let path = unifiedPath(procCgroup: text)
        else { return nil }
        return Cgroup(mount: mount, hierarchyPath: path)
    }

    /// The cgroup whose directory is `directory` (below the cgroup2 mount), or nil.
    public static func at(directory: String) -> Cgroup? {
        guard let mount = unifiedMount() else { return nil }
        let standardized = URL(fileURLWithPath: directory).standardized.path
        let base = mount.mountPoint.hasSuffix("/") ? String(mount.mountPoint.dropLast()) : mount.mountPoint
        guard standardized == base || standardized.hasPrefix(base + "/") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: standardized, isDirectory: &isDirectory), isDirectory.boolValue
        else { return nil }
        return Cgroup(mountPoint: base, path: String(standardized.dropFirst(base.count)))
    }

    /// A hierarchy path (as `/proc/PID/cgroup` shows it) on `mount`; nil when it lies outside
    /// the part of the hierarchy that is mounted.
    init?(mount: (mountPoint: String, root: String), hierarchyPath path: String) {
        let root = mount.root == "/" ? "" : mount.root
        guard path == mount.root || root.isEmpty || path.hasPrefix(root + "/") else { return nil }
        self.init(mountPoint: mount.mountPoint, path: String(path.dropFirst(root.count)))
    }

    /// Where `cordon run` creates an app's cgroup: `override` (a flag or `CORDON_CGROUP_PARENT`)
    /// when given — `none` for no cgroup, else a directory of the cgroup2 hierarchy that this
    /// process can write —, otherwise this process's own cgroup when it is delegated to it
    /// (writable), else nil (the app is frozen with signals).
    public static func delegatedParent(override: String?) throws(CgroupParentError) -> Cgroup? {
        if let override, !override.isEmpty {
            if override == "none" { return nil }
            guard override.hasPrefix("/") else { throw .notAbsolute(override) }
            guard let cgroup = at(directory: override) else {
                throw unifiedMount() == nil ? .noCgroup2(override) : .notACgroup(override)
            }
            guard cgroup.isWritable else { throw .notWritable(override) }
            return cgroup
        }
        guard let own = of(pid: getpid()), own.isWritable else { return nil }
        return own
    }

    /// Decodes the octal escapes of `mountinfo` (`\040` for a space).
    private static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Why the cgroup parent given to `cordon run` cannot be used.
public enum CgroupParentError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAbsolute(String)
    case noCgroup2(String)
    case notACgroup(String)
    case notWritable(String)

    public var description: String {
        switch self {
        case .notAbsolute(let path): return "\(path) is not an absolute path"
        case .noCgroup2(let path): return "\(path): no cgroup2 hierarchy is mounted"
        case .notACgroup(let path): return "\(path) is not a directory of the cgroup2 hierarchy"
        case .notWritable(let path): return "\(path) is not delegated to this user (its cgroup.procs is not writable)"
        }
    }
}
