import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Finding, freezing, killing and watching cgroup v2 directories.
@Suite struct CgroupTests {
    static let hybridMountinfo = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """

    @Test func findsTheUnifiedMountInMountinfo() {
        let mount = Cgroup.unifiedMount(mountinfo: Self.hybridMountinfo)
        #expect(mount?.mountPoint == "/sys/fs/cgroup/unified")
        #expect(mount?.root == "/")
        let escaped = #"29 1 0:26 /user.slice /mnt/my\040cgroups rw shared:4 - cgroup2 cgroup2 rw,nsdelegate"#
        #expect(Cgroup.unifiedMount(mountinfo: escaped)?.mountPoint == "/mnt/my cgroups")
        #expect(Cgroup.unifiedMount(mountinfo: escaped)?.root == "/user.slice")
        #expect(Cgroup.unifiedMount(mountinfo: "37 31 0:34 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw") == nil)
    }

    @Test func readsTheUnifiedLineOfProcCgroup() {
        let text = "6:freezer:/\n1:cpu:/\n0::/user.slice/user-1000.slice/session-2.scope\n"
        #expect(Cgroup.unifiedPath(procCgroup: text) == "/user.slice/user-1000.slice/session-2.scope")
        #expect(Cgroup.unifiedPath(procCgroup: "6:freezer:/\n") == nil)
        #expect(Cgroup.unifiedPath(procCgroup: "0::/gone (deleted)\n") == nil)
    }

    @Test func pathsNestAndContain() {
        let root = Cgroup(mountPoint: "/sys/fs/cgroup", path: "/")
        let app = root.child("user.slice").child("cordon-com.example.a-12")
        #expect(app.path == "/user.slice/cordon-com.example.a-12")
        #expect(app.directory == "/sys/fs/cgroup/user.slice/cordon-com.example.a-12")
        #expect(root.contains(app))
        #expect(root.child("user.slice").contains(app))
        #expect(!app.contains(root.child("user.slice")))
        #expect(!root.child("user").contains(app), "a prefix of a name is not a parent")
        // Names are bytes: a child whose name begins with a combining mark is still below, and a
        // canonically equivalent spelling is another cgroup.
        #expect(app.contains(app.child("\u{352}x")))
        #expect(!root.child("caf\u{e9}").contains(root.child("cafe\u{301}")))
        #expect(root.isRoot && !app.isRoot)
    }

    @Test func parsesEvents() {
        #expect(Cgroup.Events(parsing: "populated 1\nfrozen 0\n") == Cgroup.Events(populated: true, frozen: false))
        #expect(Cgroup.Events(parsing: "populated 0\n") == nil)
    }

    @Test func readsWhetherAProcessRunsFromItsStatus() {
        let sleeping = "Name:\tsleep\nState:\tS (sleeping)\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
        #expect(ProcessInfoReader.runState(status: sleeping) == .running)
        #expect(ProcessInfoReader.runState(status: "State:\tT (stopped)\n") == .stopped)
        #expect(ProcessInfoReader.runState(status: "State:\tt (tracing stop)\n") == .stopped)
        #expect(ProcessInfoReader.runState(status: "State:\tZ (zombie)\n") == .gone)
        let pending = "State:\tR (running)\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000040000\n"
        #expect(ProcessInfoReader.runState(status: pending) == .stopping, "SIGSTOP (19) is bit 18")
        #expect(ProcessInfoReader.runState(of: getpid()) == .running)
        #expect(ProcessInfoReader.startTime(of: getpid()) != nil)
    }

    @Test func aParentThatCannotBeUsedIsNamed() throws {
        #expect(try Cgroup.delegatedParent(override: "none") == nil)
        #expect(throws: CgroupParentError.notAbsolute("cgroups/mine")) {
            try Cgroup.delegatedParent(override: "cgroups/mine")
        }
        let error = #expect(throws: CgroupParentError.self) { try Cgroup.delegatedParent(override: "/tmp") }
        #expect(error == .notACgroup("/tmp") || error == .noCgroup2("/tmp"))
    }

    @Test(.enabled(if: Cgroup.unifiedMount() != nil, "no cgroup2 hierarchy is mounted"))
    func freezesKillsAndWatchesARealCgroup() throws {
        let parent = try TestCgroupParent()
        defer { parent.remove() }
        #expect(try Cgroup.delegatedParent(override: parent.cgroup.directory) == parent.cgroup)
        let app = parent.cgroup.child("app")
        try app.create()
        // A shell moves itself in and becomes sleep: the test runner never enters the cgroup, so
        // no other test's child can be born there (cordon run's `hostingChildren` is tested end to end).
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sh")
        sleeper.arguments = ["-c", "echo $$ > \"$0/cgroup.procs\" && exec sleep 1000", app.directory]
        try sleeper.run()
        defer { kill(sleeper.processIdentifier, SIGKILL) }
        let pid = sleeper.processIdentifier
        #expect(app.waitForEvents(timeout: .seconds(10)) { $0.populated })
        #expect(Cgroup.of(pid: pid) == app)
        #expect(app.processes() == [pid])
        #expect(app.canFreezeAndKill)

        try app.setFrozen(true)
        #expect(app.waitForEvents(timeout: .seconds(10)) { $0.frozen })
        kill(pid, SIGCONT)
        #expect(app.events()?.frozen == true, "SIGCONT does not thaw a frozen cgroup")
        #expect(app.freezeRequested == true)
        try app.setFrozen(false)
        #expect(app.waitForEvents(timeout: .seconds(10)) { !$0.frozen })

        try app.kill()
        #expect(app.waitForEvents(timeout: .seconds(10)) { !$0.populated })
        sleeper.waitUntilExit()
        #expect(sleeper.terminationReason == .uncaughtSignal && sleeper.terminationStatus == SIGKILL)
        try app.remove()
        #expect(!app.exists)
    }
}

/// A parent cgroup of the test's own below this process's cgroup, removed with everything in it.
struct TestCgroupParent {
    let cgroup: Cgroup

    init() throws {
        let own = try #require(Cgroup.of(pid: getpid()), "this process's cgroup cannot be read")
        cgroup = own.child("cordon-test-" + UUID().uuidString.prefix(8).lowercased())
        try cgroup.create()
    }

    func remove() { cgroup.killAndRemoveTree() }
}
