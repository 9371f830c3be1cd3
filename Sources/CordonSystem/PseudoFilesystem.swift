import CCordonLinux

/// The kernel's pseudo-filesystems, told by `fstatfs`'s `f_type`: files that are views of a
/// process or of the kernel (`/proc`, `/sys`, `/dev/pts`, ...), never documents. Whose `/proc/self`
/// a read shows depends on who reads, so the agent must never hand one over (docs/THREAT-MODEL.md,
/// "Documents").
public enum PseudoFilesystem {
    /// `f_type` values (linux/magic.h) and their names.
    static let names: [Int: String] = [
        0x9fa0: "procfs",
        0x6265_6572: "sysfs",
        0x1cd1: "devpts",
        0x6462_6720: "debugfs",
        0x7472_6163: "tracefs",
        0x7363_6673: "securityfs",
        0x27e0eb: "cgroup",
        0x6367_7270: "cgroup2",
        0xcafe_4a11: "bpf",
        0x6165_676c: "pstore",
        0xde5e_81e4: "efivarfs",
        0x6265_6570: "configfs",
        0x6573_5543: "fusectl",
        0x4249_4e4d: "binfmt_misc",
        0x1980_0202: "mqueue",
        0x6e73_6673: "nsfs",
        0xf97c_ff8c: "selinuxfs",
        0x4341_5d53: "smackfs",
        0x0904_1934: "anon_inodefs",
        0x5049_5045: "pipefs",
        0x534f_434b: "sockfs",
    ]

    /// The name of the pseudo-filesystem `f_type` stands for, or nil for an ordinary one.
    public static func name(ofType type: Int) -> String? { names[type] }

    /// The name of the pseudo-filesystem the open descriptor `descriptor` is on, or nil; an
    /// `fstatfs` that fails counts as one ("unknown"): a check must not pass by failing.
    public static func name(of descriptor: CInt) -> String? {
        var type: Int64 = 0
        guard cordon_filesystem_type(descriptor, &type) == 0 else { return "an unknown filesystem" }
        return names[Int(type)]
    }
}
