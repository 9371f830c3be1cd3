import Foundation

/// What pins a registration to one process image: the process's start time (a recycled pid has
/// another) and the device and inode of the executable it runs (an `exec` of another program
/// changes them), read through `/proc` (docs/ARCHITECTURE.md, "App identity").
public struct ProcessFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// Field 22 of `/proc/PID/stat`: clock ticks after boot at which the process started.
    public let startTime: UInt64
    /// `st_dev` of the running executable (`stat` through `/proc/PID/exe`).
    public let executableDevice: UInt64
    /// `st_ino` of the running executable.
    public let executableInode: UInt64

    public init(startTime: UInt64, executableDevice: UInt64, executableInode: UInt64) {
        self.startTime = startTime
        self.executableDevice = executableDevice
        self.executableInode = executableInode
    }

    /// Reads the fingerprint of `pid`; nil when its `/proc` entry cannot be read (it exited, or
    /// it is non-dumpable: then a process of its own user cannot see its executable, which is why
    /// an app registers *before* it hardens itself, and later calls check it through
    /// ``ProcessDirectory`` instead).
    ///
    /// A caller that holds a pidfd of the process passes the start time it registered with, and
    /// then only the executable is read: the pid is still that process as long as the pidfd says
    /// it is alive, which the caller checks *after* this returns (a pid is not reused before its
    /// process has exited and been reaped).
    public static func read(pid: Int32, startTime known: UInt64? = nil) -> ProcessFingerprint? {
        guard let startTime = known ?? ProcessInfoReader.startTime(of: pid) else { return nil }
        var info = stat()
        guard stat("/proc/\(pid)/exe", &info) == 0 else { return nil }
        return ProcessFingerprint(
            startTime: startTime, executableDevice: UInt64(info.st_dev), executableInode: UInt64(info.st_ino))
    }

    /// `start=… exe=dev:inode`.
    public var description: String { "start=\(startTime) exe=\(executableDevice):\(executableInode)" }

    /// Why `now` is not the same process image as `self`, or nil when it is.
    public func change(to now: ProcessFingerprint?) -> String? {
        guard let now else { return "the process has exited" }
        if now.startTime != startTime { return "the process id now belongs to another process" }
        if now.executableDevice != executableDevice || now.executableInode != executableInode {
            return "the process now runs another executable (it exec'd)"
        }
        return nil
    }
}

extension ProcessInfoReader {
    /// The dynamic-linker variables that load code into a process at start.
    public static let injectionVariables = ["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH"]

    /// How code is injected into `pid` at start, or nil when nothing is: a non-empty `LD_PRELOAD`,
    /// `LD_AUDIT` or `LD_LIBRARY_PATH` in its environment, or a non-empty `preloadFile`
    /// (`/etc/ld.so.preload`, which the dynamic linker loads into every program) as the process
    /// sees it: read through `/proc/PID/root`, so a file mounted over it in a namespace of the
    /// process's own counts (docs/THREAT-MODEL.md, "App identity").
    public static func injection(of pid: Int32, preloadFile: String = "/etc/ld.so.preload") -> String? {
        if let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") {
            for entry in environ.split(separator: 0) {
                for variable in injectionVariables {
                    let prefix = Array((variable + "=").utf8)
                    if entry.starts(with: prefix) && entry.count > prefix.count { return "\(variable) is set" }
                }
            }
        }
        let path = "/proc/\(pid)/root" + preloadFile
        let contents: [UInt8]
        do {
            contents = try BoundedFile.read(path, limit: 1 << 16)
        } catch {
            // Absent (the usual case) or unreadable to the agent, which runs as the process's own
            // user, so unreadable to its dynamic linker too; a huge or special file is suspect.
            if case .unreadable = error { return nil }
            return "\(preloadFile) is not a small regular file"
        }
        if contents.contains(where: { !($0 == 0x20 || $0 == 0x0a || $0 == 0x09) }) {
            return "\(preloadFile) preloads libraries into every program"
        }
        return nil
    }
}
