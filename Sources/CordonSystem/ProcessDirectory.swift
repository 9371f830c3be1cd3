import CCordonLinux
import Glibc

/// A process's `/proc/PID` directory, held open from the moment the agent identified the process:
/// the cheap per-call check that a registration's process is still the one that registered and
/// still non-dumpable (docs/THREAT-MODEL.md, "App identity").
///
/// The descriptor stays bound to the process it was opened for: once that process has gone, every
/// lookup under it fails, even if its pid is reused. The kernel gives a non-dumpable process's
/// `/proc/PID/*` files to root (the directory itself keeps the process's uid), so the owner of
/// `stat` says, in one `fstatat`, whether the process is non-dumpable — which a process of its
/// own uid could not read otherwise. A non-dumpable process of an ordinary user cannot be traced
/// or have its memory read by another process of that user, and an `exec` makes a process
/// dumpable again: "still non-dumpable" also means "no exec since it hardened".
public final class ProcessDirectory: Sendable {
    /// The `O_PATH` descriptor of `/proc/PID`.
    public let descriptor: Int32
    /// The process's pid when the directory was opened.
    public let pid: Int32

    /// What the directory says of its process now.
    public enum Dumpability: Equatable, Sendable {
        /// The process lets processes of its user trace it and read its memory.
        case dumpable
        /// The process is non-dumpable: only root (or its user namespace's owner) can trace it.
        case nonDumpable
        /// The process has exited (its `/proc` entries are gone or it has no memory any more).
        case exited
        /// The process runs as root, whose files stay root's either way: dumpability cannot be
        /// told from the owner.
        case unknown
    }

    /// Opens `/proc/PID`; nil when the process does not exist. Callers that hold a pidfd check it
    /// is alive *after* this returns: then the directory is that very process's.
    public init?(pid: Int32) {
        let descriptor = open("/proc/\(pid)", Self.pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.pid = pid
    }

    deinit { close(descriptor) }

    /// `O_PATH` (Glibc's module does not export it): a handle for lookups under it only.
    private static let pathOnly = cordon_o_path()

    /// Whether the process is dumpable now, for a process whose effective uid is `uid`: one
    /// `fstatat` of `stat`. Callers that hold a pidfd ask it afterwards whether the process lives
    /// (``Pidfd/hasExited``): a process in the middle of exiting has no memory and reads as root's.
    public func dumpability(uid: UInt32) -> Dumpability {
        var info = stat()
        guard fstatat(descriptor, "stat", &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .exited }
        if uid == 0 { return .unknown }
        return info.st_uid == 0 ? .nonDumpable : .dumpable
    }
}
