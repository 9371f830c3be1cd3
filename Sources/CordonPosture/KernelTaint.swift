/// The kernel's taint flags (Documentation/admin-guide/tainted-kernels.rst).
enum KernelTaint {
    static let flags: [(bit: Int, letter: Character, meaning: String)] = [
        (0, "P", "a proprietary module was loaded"), (1, "F", "a module was force-loaded"),
        (2, "S", "SMP with a CPU not designed for it"), (3, "R", "a module was force-unloaded"),
        (4, "M", "a machine check occurred"), (5, "B", "a bad page was referenced"),
        (6, "U", "tainted on user request"), (7, "D", "the kernel died recently (oops or BUG)"),
        (8, "A", "an ACPI table was overridden"), (9, "W", "the kernel issued a warning"),
        (10, "C", "a staging driver was loaded"), (11, "I", "a platform firmware bug is worked around"),
        (12, "O", "an out-of-tree module was loaded"), (13, "E", "an unsigned module was loaded"),
        (14, "L", "a soft lockup occurred"), (15, "K", "the kernel was live patched"),
        (16, "X", "an auxiliary taint"), (17, "T", "built with the struct randomization plugin"),
        (18, "N", "an in-kernel test was run"),
    ]

    /// The set bits as letters and meanings (`O: an out-of-tree module was loaded`).
    static func describe(_ mask: UInt64) -> String {
        var parts: [String] = []
        for flag in flags where mask & (1 << UInt64(flag.bit)) != 0 {
            parts.append("\(flag.letter): \(flag.meaning)")
        }
        let known = flags.reduce(UInt64(0)) { $0 | (1 << UInt64($1.bit)) }
        if mask & ~known != 0 { parts.append("other bits \(mask & ~known)") }
        return parts.joined(separator: "; ")
    }
}
