import CordonSystem
import Foundation
import Testing

@testable import CordonServer

#if canImport(Glibc)
    import Glibc
#endif

/// The rule for freezing an app through its cgroup: only a cgroup of the app's own.
@Suite(.enabled(if: Cgroup.unifiedMount() != nil, "no cgroup2 hierarchy is mounted"))
final class AppCgroupTests {
    let parent: Cgroup
    let app: Cgroup
    var processes: [Process] = []

    init() throws {
        let own = try #require(Cgroup.of(pid: getpid()))
        parent = own.child("cordon-test-" + UUID().uuidString.prefix(8).lowercased())
        try parent.create()
        app = parent.child("cordon-com.example.app-1")
        try app.create()
    }

    deinit {
        try? parent.kill()
        _ = parent.waitForEvents(timeout: .seconds(60)) { !$0.populated }
        for process in processes { process.waitUntilExit() }
        try? app.remove()
        try? parent.remove()
    }

    /// `sleep` started in `cgroup` (a shell moves itself in, then becomes `sleep`: the test runner
    /// itself never enters the cgroup, so no other test's child can be born there), with a pidfd.
    func sleeper(in cgroup: Cgroup) async throws -> (Int32, Pidfd) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "echo $$ > \"$0/cgroup.procs\" && exec sleep 1000", cgroup.directory]
        try process.run()
        processes.append(process)
        let pid = process.processIdentifier
        let pidfd = try #require(Pidfd(pid: pid))
        try await eventually("pid \(pid) is in \(cgroup)") { Cgroup.of(pid: pid) == cgroup }
        return (pid, pidfd)
    }

    func verdict(_ pid: Int32, _ pidfd: Pidfd, onBehalf: Bool = true, registrar: Int32 = getpid()) -> AppCgroup.Verdict
    {
        AppCgroup.verdict(
            pid: pid, pidfd: pidfd, onBehalf: onBehalf, registrar: registrar, agent: Cgroup.of(pid: getpid()))
    }

    @Test func aCgroupHoldingOnlyTheAppIsItsOwn() async throws {
        let (pid, pidfd) = try await sleeper(in: app)
        #expect(verdict(pid, pidfd) == .own(app))
    }

    @Test func anAppThatRegisteredItselfGetsNone() async throws {
        let (pid, pidfd) = try await sleeper(in: app)
        guard case .none(let reason) = verdict(pid, pidfd, onBehalf: false) else {
            Issue.record("an app registered by itself got a cgroup")
            return
        }
        #expect(reason.contains("registered itself"))
    }

    @Test func aCgroupHoldingTheRegistrarOrTheAgentIsNotFrozen() async throws {
        let (pid, pidfd) = try await sleeper(in: app)
        let (registrar, _) = try await sleeper(in: app)
        guard case .none(let reason) = verdict(pid, pidfd, registrar: registrar) else {
            Issue.record("a cgroup holding the registering process was taken")
            return
        }
        #expect(reason.contains("holds the process that registered it"))
        let agentInside = AppCgroup.verdict(pid: pid, pidfd: pidfd, onBehalf: true, registrar: getpid(), agent: app)
        #expect(agentInside == .none("its cgroup \(app) holds the agent"))
    }

    @Test func aCgroupHoldingAnOlderProcessIsShared() async throws {
        let (older, _) = try await sleeper(in: app)
        let olderStart = try #require(ProcessInfoReader.startTime(of: older))
        // Start times count clock ticks: start the app until it started a tick later.
        var attempt = try await sleeper(in: app)
        while (ProcessInfoReader.startTime(of: attempt.0) ?? 0) <= olderStart {
            kill(attempt.0, SIGKILL)
            attempt = try await sleeper(in: app)
        }
        let verdict = verdict(attempt.0, attempt.1)
        #expect(verdict == .none("its cgroup \(app) also holds pid \(older), which started before the app"))
    }
}
