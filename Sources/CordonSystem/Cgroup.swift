import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A cgroup v2 directory: what `cordon run` starts an app in and the agent freezes
/// (`cgroup.freeze`), kills (`cgroup.kill`) and watches (`cgroup.events`) as a whole, so children
/// and `setsid` escapes go with the app and a stray SIGCONT does not thaw it
/// (docs/ARCHITECTURE.md, "Freezing").
///
/// `path` is the cgroup's path in the hierarchy as `/proc/PID/cgroup` shows it ("/" for the root
/// of the mount); `mountPoint` is where the cgroup2 hierarchy is mounted. Discovery (the mount,
/// a process's cgroup, the delegated parent) is in `Cgroup+Discovery.swift`.
public struct Cgroup: Sendable, Hashable, CustomStringConvertible {
    public let mountPoint: String
    public let path: String

    public init(mountPoint: String, path: String) {
        self.mountPoint = mountPoint
        self.path = path.isEmpty ? "/" : path
    }

    /// The cgroup's directory on the file system.
    public var directory: String { path == "/" ? mountPoint : mountPoint + path }

    public var description: String { path }

    /// The root of the mounted hierarchy (it has no `cgroup.freeze` or `cgroup.kill`).
    public var isRoot: Bool { path == "/" }

    /// The cgroup named `name` directly below this one.
    public func child(_ name: String) -> Cgroup {
        Cgroup(mountPoint: mountPoint, path: isRoot ? "/" + name : path + "/" + name)
    }

    /// Whether `other` is this cgroup or one below it.
    public func contains(_ other: Cgroup) -> Bool {
        // Byte comparisons: String's `==` and `hasPrefix` compare characters under canonical
        // equivalence, but the kernel names cgroups by their bytes.
        isRoot || other.path.utf8.elementsEqual(path.utf8) || other.path.utf8.starts(with: (path + "/").utf8)
    }

    /// What `cgroup.events` says.
    public struct Events: Sendable, Equatable {
        /// Some process is in the cgroup or below it.
        public var populated: Bool
        /// Every process in it is frozen (the freeze took effect).
        public var frozen: Bool

        public init(populated: Bool, frozen: Bool) {
            self.populated = populated
            self.frozen = frozen
        }

        /// Parses `populated 1\nfrozen 0\n`; nil when either key is missing.
        public init?(parsing text: String) {
            var values: [Substring: Bool] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2 { values[parts[0]] = parts[1] == "1" }
            }
            guard let populated = values["populated"], let frozen = values["frozen"] else { return nil }
            self.init(populated: populated, frozen: frozen)
        }
    }

    // MARK: - Operations

    /// Creates the cgroup's directory.
    public func create() throws {
        guard mkdir(directory, 0o755) == 0 else { throw SystemError(operation: "mkdir(\(directory))", errno: errno) }
    }

    /// Removes the cgroup's directory (the kernel refuses while a process is in it: EBUSY).
    public func remove() throws {
        guard rmdir(directory) == 0 else { throw SystemError(operation: "rmdir(\(directory))", errno: errno) }
    }

    /// Kills every process left in the cgroup and below, waits (at most `timeout`) until it is
    /// empty, then removes it and every cgroup below it; best effort.
    public func killAndRemoveTree(timeout: Duration = .seconds(10)) {
        if events()?.populated == true {
            try? kill()
            _ = waitForEvents(timeout: timeout) { !$0.populated }
        }
        for child in descendants().reversed() { try? child.remove() }
        try? remove()
    }

    /// Whether the cgroup's directory exists.
    public var exists: Bool { access(directory, F_OK) == 0 }

    /// Moves process `pid` (all its threads) into the cgroup.
    public func add(_ pid: Int32) throws { try write("cgroup.procs", "\(pid)\n") }

    /// Writes `cgroup.freeze`: 1 freezes every process in the cgroup and below, 0 thaws them.
    public func setFrozen(_ frozen: Bool) throws { try write("cgroup.freeze", frozen ? "1\n" : "0\n") }

    /// What `cgroup.freeze` asks for (true: frozen), nil when unreadable.
    public var freezeRequested: Bool? {
        read("cgroup.freeze").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "1" }
    }

    /// SIGKILL to every process in the cgroup and below, frozen or not (`cgroup.kill`).
    public func kill() throws { try write("cgroup.kill", "1\n") }

    /// `cgroup.events`, nil when unreadable (the cgroup is gone).
    public func events() -> Events? { read("cgroup.events").flatMap(Events.init(parsing:)) }

    /// The cgroups below this one, depth first.
    public func descendants() -> [Cgroup] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.sorted().flatMap { name -> [Cgroup] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { return [] }
            let child = child(name)
            return [child] + child.descendants()
        }
    }

    /// Every process in the cgroup and below it.
    public func processes() -> [Int32] {
        ([self] + descendants()).flatMap { cgroup in
            (cgroup.read("cgroup.procs") ?? "").split(separator: "\n").compactMap { Int32($0) }
        }
    }

    /// Whether this process may create cgroups here and move processes in and out
    /// (the directory and its `cgroup.procs` are writable).
    public var isWritable: Bool {
        access(directory, W_OK) == 0 && access(directory + "/cgroup.procs", W_OK) == 0
    }

    /// Whether the agent may freeze and kill it: `cgroup.freeze` and `cgroup.kill` exist and are writable.
    public var canFreezeAndKill: Bool {
        access(directory + "/cgroup.freeze", W_OK) == 0 && access(directory + "/cgroup.kill", W_OK) == 0
    }

    /// Runs `start` — which starts child processes — with this process moved into the cgroup, so
    /// the children are born in it (before they run a single instruction of their own), then
    /// moves this process back to the cgroup it was in. Both cgroups must be writable.
    public func hostingChildren<T>(_ start: () throws -> T) throws -> T {
        guard let home = Cgroup.of(pid: getpid()), home.mountPoint == mountPoint else {
            throw SystemError(operation: "read /proc/self/cgroup", errno: ENOENT)
        }
        // Checked first: this process must not stay in a cgroup that is about to be frozen.
        guard home.isWritable else {
            throw SystemError(operation: "access(\(home.directory)/cgroup.procs)", errno: EACCES)
        }
        try add(getpid())
        let started = Result { try start() }
        try home.add(getpid())
        return try started.get()
    }

    /// Waits until `condition` holds for `cgroup.events`, woken by the kernel's notification on
    /// every change (poll, POLLPRI), never by a timer; false when `timeout` passes first.
    public func waitForEvents(timeout: Duration, until condition: (Events) -> Bool) -> Bool {
        let descriptor = open(directory + "/cgroup.events", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            // Reading re-arms the notification: poll wakes on the next change after it.
            guard let events = Self.readAll(descriptor).flatMap(Events.init(parsing:)) else { return false }
            if condition(events) { return true }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            var request = pollfd(fd: descriptor, events: Int16(POLLPRI), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            if poll(&request, 1, Int32(clamping: max(1, milliseconds))) < 0 && errno != EINTR { return false }
        }
    }

    // MARK: - Files

    /// Writes one of the cgroup's control files.
    func write(_ file: String, _ text: String) throws {
        let path = directory + "/" + file
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(operation: "open(\(path))", errno: errno) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SystemError(operation: "write(\(path))", errno: errno) }
    }

    /// Reads one of the cgroup's files, nil when it cannot be read.
    func read(_ file: String) -> String? {
        let descriptor = open(directory + "/" + file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return Self.readAll(descriptor)
    }

    /// Reads a (small) kernel file from its start.
    static func readAll(_ descriptor: Int32) -> String? {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            data += buffer[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }
}
