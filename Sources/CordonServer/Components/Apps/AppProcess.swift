import CordonProtocol
import CordonSystem

/// The process a registration stands for: the connection's peer, or a child of it that the peer
/// registers on its behalf (`cordon run`), with a pidfd that pins that very process and the
/// fingerprint (start time, executable) it had when it registered.
struct AppProcess {
    let identity: PeerIdentity
    let pidfd: Pidfd?
    let onBehalf: Bool
    /// The image the process ran when it registered; nil for a child registered on its behalf,
    /// which may not have exec'd its program yet (it never gets a key or data, so it is never
    /// verified against it).
    let fingerprint: ProcessFingerprint?
    /// The process's `/proc` directory, held from registration: the per-call check that it is
    /// still that process and still non-dumpable (``ProcessDirectory``); nil for a child
    /// registered on its behalf.
    let directory: ProcessDirectory?
    /// The process was seen non-dumpable, with no tracer attached, on a call after it registered:
    /// from then on no process of its user can attach to it, so later calls check only that it
    /// is still non-dumpable (docs/THREAT-MODEL.md, "App identity").
    var hardened = false
    /// How code was injected into this image when it started (`LD_PRELOAD` and the like, or
    /// `/etc/ld.so.preload`), read with the registration's facts; nil when nothing was. It is read
    /// once: the dynamic linker acts only when a program starts, and a later `exec` changes
    /// ``fingerprint``, which refuses every call of the registration (docs/THREAT-MODEL.md).
    var injection: String?

    /// The connection's own process, as it is now (a process may `exec` between connecting and
    /// registering: the executable is read again here), or the child `pid` after checking that it
    /// is a direct child of the connection's process, runs as the allowed uid, and still exists.
    static func resolve(pid: Int?, connection: AgentConnection, allowedUID: UInt32) throws(CordonError) -> AppProcess {
        guard let pid, pid != Int(connection.identity.pid) else {
            let own = connection.identity
            guard let pidfd = connection.pidfd else {
                throw .invalidProcess(pid: Int(own.pid), reason: "the kernel gives no process handle for it")
            }
            // Opened first, like the facts below: the pidfd checked afterwards vouches for them all.
            let directory = ProcessDirectory(pid: own.pid)
            let fingerprint = ProcessFingerprint.read(pid: own.pid)
            let executable = ProcessInfoReader.executable(of: own.pid)
            guard let directory, pidfd.isAlive, !pidfd.hasExited else {
                throw .invalidProcess(pid: Int(own.pid), reason: "the process has exited")
            }
            guard let fingerprint else {
                // Its own user cannot read what a non-dumpable process runs: the identity is read
                // while the app is still dumpable, and it hardens itself after (CordonKit does).
                let reason =
                    directory.dumpability(uid: own.uid) == .nonDumpable
                    ? "it is already non-dumpable, so the agent cannot read what it runs: register before making the process non-dumpable"
                    : "its executable cannot be read"
                throw .invalidProcess(pid: Int(own.pid), reason: reason)
            }
            return AppProcess(
                identity: PeerIdentity(pid: own.pid, uid: own.uid, gid: own.gid, executable: executable),
                pidfd: pidfd, onBehalf: false, fingerprint: fingerprint, directory: directory)
        }
        guard let child = Int32(exactly: pid), child > 1 else {
            throw .invalidProcess(pid: pid, reason: "not a process id")
        }
        // Open the handle first: every fact read after it is checked against it.
        guard let pidfd = Pidfd(pid: child) else { throw .invalidProcess(pid: pid, reason: "no such process") }
        guard let facts = ProcessInfoReader.parentAndGroup(of: child),
            let owner = ProcessInfoReader.owner(of: child)
        else { throw .invalidProcess(pid: pid, reason: "its /proc entry cannot be read") }
        guard facts.ppid == connection.identity.pid else {
            throw .invalidProcess(pid: pid, reason: "it is not a child of the registering process")
        }
        guard owner.uid == allowedUID else { throw .invalidProcess(pid: pid, reason: "it runs as another user") }
        let executable = ProcessInfoReader.executable(of: child)
        guard pidfd.isAlive else { throw .invalidProcess(pid: pid, reason: "the process has exited") }
        return AppProcess(
            identity: PeerIdentity(pid: child, uid: owner.uid, gid: owner.gid, executable: executable), pidfd: pidfd,
            onBehalf: true, fingerprint: nil, directory: nil)
    }
}
