import CCordonLinux
import Foundation

/// Who is at the other end of a Unix socket, established once per connection.
///
/// The uid and pid come from `SO_PEERCRED`, the pidfd from `SO_PEERPIDFD` (falling back to
/// `pidfd_open` on older kernels), and the executable from `/proc/PID/exe`, read while the
/// pidfd proves the process is still the one that connected.
public struct PeerIdentity: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
    /// The executable's path, or "" when it cannot be read.
    public let executable: String

    public init(pid: Int32, uid: UInt32, gid: UInt32, executable: String) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.executable = executable
    }

    /// Builds the identity from credentials already read (`SO_PEERCRED`) and a peer pidfd
    /// (`SO_PEERPIDFD`, or < 0 to open one by pid). Returns it with the owned pidfd.
    public static func resolve(pid: Int32, uid: UInt32, gid: UInt32, pidfd descriptor: Int32) -> (PeerIdentity, Pidfd?)
    {
        let pidfd = Pidfd(adopting: descriptor) ?? Pidfd(pid: pid)
        let executable = ProcessInfoReader.executable(of: pid)
        // The executable is only trusted if the process is still the one that connected.
        let trusted = pidfd?.isAlive ?? false
        return (PeerIdentity(pid: pid, uid: uid, gid: gid, executable: trusted ? executable : ""), pidfd)
    }

    /// Reads the identity of the peer of the connected socket `fd`.
    /// Returns the identity and an owned pidfd (or nil when the kernel gives none).
    public static func of(socket fd: Int32) throws -> (PeerIdentity, Pidfd?) {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        let rc = cordon_peer_credentials(fd, &pid, &uid, &gid)
        guard rc == 0 else { throw SystemError(operation: "getsockopt(SO_PEERCRED)", errno: -rc) }
        return resolve(pid: pid, uid: uid, gid: gid, pidfd: cordon_peer_pidfd(fd))
    }
}

/// The peer credentials as `SO_PEERCRED` returns them (layout of `struct ucred`).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// An owned pidfd: a stable handle to one process that a recycled PID cannot alias.
public final class Pidfd: Sendable {
    public let descriptor: Int32

    /// Takes ownership of `descriptor`; nil when it is an error code (< 0).
    public init?(adopting descriptor: Int32) {
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    /// Opens a pidfd for `pid`.
    public convenience init?(pid: Int32) {
        self.init(adopting: cordon_pidfd_open(pid))
    }

    deinit { close(descriptor) }

    /// Whether the process still exists (signal 0 through the pidfd). An exited process that its
    /// parent has not reaped yet (a zombie) still counts: see ``hasExited``.
    public var isAlive: Bool { cordon_pidfd_send_signal(descriptor, 0) == 0 }

    /// Whether the process has exited, reaped or not: a pidfd polls readable once its process has
    /// exited (one `poll` that does not wait).
    public var hasExited: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        return ready != 0
    }

    /// Sends `signal` to exactly this process.
    public func send(signal: Int32) throws {
        let rc = cordon_pidfd_send_signal(descriptor, signal)
        guard rc == 0 else { throw SystemError(operation: "pidfd_send_signal", errno: -rc) }
    }

    /// Sends `signal` to this process's group through the pidfd (so a recycled PID or PGID is
    /// never hit). Falls back to the process alone on kernels without group signalling.
    /// Returns whether the whole group was signalled.
    @discardableResult
    public func sendToGroup(signal: Int32) throws -> Bool {
        let rc = cordon_pidfd_signal_group(descriptor, signal)
        if rc == 0 { return true }
        guard rc == -EINVAL else { throw SystemError(operation: "pidfd_send_signal(group)", errno: -rc) }
        try send(signal: signal)
        return false
    }
}

/// Reads process facts from `/proc`.
public enum ProcessInfoReader {
    /// The resolved executable path of `pid`, or "" when it cannot be read.
    public static func executable(of pid: Int32) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
    }

    /// The pid tracing `pid` (a debugger), 0 when none, nil when unreadable.
    public static func tracerPID(of pid: Int32) -> Int32? {
        ProcFile.withContents("/proc/\(pid)/status") { status in
            ProcFile.statusNumber(status, key: "TracerPid:").flatMap { Int32(exactly: $0) }
        }
    }

    /// The parent pid and process group of `pid` from `/proc/PID/stat`, or nil.
    public static func parentAndGroup(of pid: Int32) -> (ppid: Int32, pgrp: Int32)? {
        ProcFile.withContents("/proc/\(pid)/stat") { stat -> (ppid: Int32, pgrp: Int32)? in
            guard let ppid = ProcFile.statNumber(stat, field: 4).flatMap({ Int32(exactly: $0) }),
                let pgrp = ProcFile.statNumber(stat, field: 5).flatMap({ Int32(exactly: $0) })
            else { return nil }
            return (ppid, pgrp)
        }
    }

    /// The real uid and gid of `pid` from `/proc/PID/status`, or nil.
    public static func owner(of pid: Int32) -> (uid: UInt32, gid: UInt32)? {
        ProcFile.withContents("/proc/\(pid)/status") { status -> (uid: UInt32, gid: UInt32)? in
            guard let uid = ProcFile.statusNumber(status, key: "Uid:").flatMap({ UInt32(exactly: $0) }),
                let gid = ProcFile.statusNumber(status, key: "Gid:").flatMap({ UInt32(exactly: $0) })
            else { return nil }
            return (uid, gid)
        }
    }

    /// The one-letter state of `pid` from `/proc/PID/stat` (R, S, T, Z, ...), or nil.
    public static func state(of pid: Int32) -> Character? {
        ProcFile.withContents("/proc/\(pid)/stat") { ProcFile.statState($0).map { Character(UnicodeScalar($0)) } }
    }
}

/// A failed system call, with the call named.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let operation: String
    public let errno: Int32

    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
}
