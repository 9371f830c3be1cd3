import CordonSystem
import Foundation
import Testing

/// A delegated parent cgroup of the test's own, below the test runner's cgroup (on this machine
/// the cgroup2 root, /sys/fs/cgroup/unified), passed to `cordon run` as CORDON_CGROUP_PARENT and
/// removed with everything in it.
struct TestCgroupParent {
    let cgroup: Cgroup

    /// Whether tests that need cgroup2 can run: the reason they are skipped otherwise.
    static let available = Cgroup.unifiedMount() != nil
    static let unavailableReason: Comment = "no cgroup2 hierarchy is mounted"

    init() throws {
        let own = try #require(Cgroup.of(pid: getpid()), "the test runner's cgroup cannot be read")
        cgroup = own.child("cordon-test-" + UUID().uuidString.prefix(8).lowercased())
        try cgroup.create()
    }

    /// The environment that has `cordon run` create apps' cgroups here.
    var environment: [String: String] { [Cgroup.parentEnvironmentKey: cgroup.directory] }

    /// The cgroup `cordon run` (pid `supervisor`) creates for `appId`.
    func appCgroup(_ appId: String, supervisor: Int32) -> Cgroup { cgroup.child("cordon-\(appId)-\(supervisor)") }

    /// Kills everything left in it and removes it (synchronous, for `defer`).
    func remove() { cgroup.killAndRemoveTree() }
}

/// The size of the file at `path` (0 when it does not exist yet).
func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}

/// A process appending a byte to a file every 2 ms, as long as it runs: a frozen app does too
/// until it is frozen, and an unfrozen control shows time passing without a timer deciding it.
enum Writer {
    static let loop = """
        import os, sys, time
        def write(path):
            with open(path, "a") as f:
                while True:
                    f.write("x"); f.flush(); time.sleep(0.002)
        """

    /// Starts a control writer appending to `path`, outside any cgroup of the test's.
    static func control(_ path: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", loop + "\nwrite(sys.argv[1])", path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A program that forks a `setsid` child appending to argv[1], writes the child's pid to
    /// argv[2], and sleeps: the app whose escaping child must freeze with it.
    static let escaping =
        loop + """

            child = os.fork()
            if child == 0:
                os.setsid()
                write(sys.argv[1])
            with open(sys.argv[2] + ".tmp", "w") as f:
                f.write(str(child))
            os.rename(sys.argv[2] + ".tmp", sys.argv[2])
            while True:
                time.sleep(1)
            """

    /// Expects `path` not to grow while the control writer appends `bytes` more bytes to `control`.
    static func expectStill(
        _ path: String, control: String, bytes: Int = 100, _ comment: Comment,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let size = fileSize(path)
        let start = fileSize(control)
        try await eventually("the control writer appends \(bytes) bytes") { fileSize(control) >= start + bytes }
        #expect(fileSize(path) == size, comment, sourceLocation: sourceLocation)
    }
}
