import CCordonLinux

/// Process-wide hardening for the daemon.
public enum ProcessHardening {
    /// Makes the process non-dumpable: no core dumps, no ptrace attach by same-uid processes.
    public static func disableDumping() throws {
        let rc = cordon_set_nondumpable()
        guard rc == 0 else { throw SystemError(operation: "prctl(PR_SET_DUMPABLE)", errno: -rc) }
    }

    /// Whether the process is currently dumpable.
    public static var isDumpable: Bool { cordon_get_dumpable() == 1 }
}
