import CCordonLinux
import CordonLocking
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Watches directories with inotify and calls `onChange` when anything in them changes.
///
/// A directory that does not exist yet is watched through its nearest existing ancestor, so
/// creating `/etc/cordon/policy.d` later is noticed too. Changes arriving together are
/// reported once; the caller re-reads what it watches (policy reloads are cheap).
public final class DirectoryWatcher: Sendable {
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let directories: [String]
    private let onChange: @Sendable () -> Void
    private let watches = Locked<Set<Int32>>([])
    /// Held while `onChange` runs; `stop()` takes it, so no callback runs after `stop()` returns.
    private let stopped = Locked<Bool>(false)

    static let mask: UInt32 = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ATTRIB)

    /// Starts watching `directories`.
    public init(directories: [String], onChange: @escaping @Sendable () -> Void) throws {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError(operation: "inotify_init1", errno: errno) }
        var pipeFDs: [Int32] = [0, 0]
        let rc = cordon_pipe_cloexec(&pipeFDs)
        guard rc == 0 else {
            close(fd)
            throw SystemError(operation: "pipe2", errno: -rc)
        }
        descriptor = fd
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
        self.directories = directories
        self.onChange = onChange
        rearm()
        let worker = Thread { [self] in run() }
        worker.name = "cordon-inotify"
        worker.start()
    }

    /// Stops watching; `onChange` is not called once this returns (an in-flight call is awaited).
    public func stop() {
        stopped.withLock { $0 = true }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    deinit {
        close(descriptor)
        close(wakeRead)
        close(wakeWrite)
    }

    /// (Re)adds a watch for each directory, or for its nearest existing ancestor, and drops
    /// watches no longer needed. A directory created (with its parents) while this runs is
    /// caught by checking again until the set of watched paths is stable.
    private func rearm() {
        var previous: [String] = []
        for _ in 0..<8 {
            let paths = directories.map(Self.nearestExisting)
            if paths == previous { break }
            previous = paths
            var added: Set<Int32> = []
            for path in paths {
                let watch = inotify_add_watch(descriptor, path, Self.mask | UInt32(IN_ONLYDIR))
                if watch >= 0 { added.insert(watch) }
            }
            let stale = watches.withLock { current -> Set<Int32> in
                defer { current = added }
                return current.subtracting(added)
            }
            for watch in stale { inotify_rm_watch(descriptor, watch) }
        }
    }

    /// `directory` if it exists, else its nearest existing ancestor.
    static func nearestExisting(_ directory: String) -> String {
        var path = directory
        var isDirectory: ObjCBool = false
        while !(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue) {
            let parent = (path as NSString).deletingLastPathComponent
            if parent == path || parent.isEmpty { return "/" }
            path = parent
        }
        return path
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var fds = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            // Drain every pending event; one callback for the batch.
            var sawEvent = false
            while true {
                let count = buffer.withUnsafeMutableBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return -1 }
                    return read(descriptor, base, raw.count)
                }
                if count <= 0 { break }
                sawEvent = true
            }
            guard sawEvent else { continue }
            // Directories may have appeared or been replaced: watch them again.
            rearm()
            let done = stopped.withLock { isStopped -> Bool in
                if !isStopped { onChange() }
                return isStopped
            }
            if done { return }
        }
    }
}
