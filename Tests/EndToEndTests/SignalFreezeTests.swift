import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// Freezing with signals, where an app has no cgroup of its own: the agent reads the real state
/// from `/proc` and stops again an app that another process resumed; and a cgroup that holds
/// more than the app's own processes is never frozen on its behalf. cordond, `cordon run`, the
/// programs and the attackers run as an ordinary user outside test mode (``UserAgent``).
@Suite struct SignalFreezeTests {
    @Test func anAppResumedBySIGCONTIsStoppedAgain() async throws {
        let agent = try await EnforcementTests.agent("freeze")
        defer { agent.cleanUp() }
        let appId = "com.example.sleeper"
        let run = try RunCommandTests.start(agent, ["--app", appId, "--", "sleep", "1000"])
        defer {
            kill(run.processIdentifier, SIGKILL)
            kill(run.processIdentifier, SIGCONT)
        }
        let pid = try await RunCommandTests.programPID(agent, appId: appId)
        defer { kill(pid, SIGKILL) }
        try await eventually("the program runs") { ProcessInfoReader.state(of: pid) == "S" }
        #expect(try await agent.apps().first?.cgroup == nil)
        // Nobody acknowledges: the supervisor is stopped.
        kill(run.processIdentifier, SIGSTOP)
        _ = try await agent.cliSucceeds(["logout"])
        try await eventually("the agent froze the app") { try await agent.apps().first?.compliance == .frozen }
        try await eventually("the program is stopped") { ProcessInfoReader.state(of: pid) == "T" }
        let frozen = try #require(try await agent.apps().first)
        #expect(frozen.freezeMethod == .signals)
        #expect(frozen.processState == .stopped)

        // The attack: SIGCONT from another process of the user. It runs — until the agent's periodic
        // check (nothing here asks the agent) stops it again and records it.
        let resume = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + ["/bin/kill", "-CONT", "\(pid)"])
        #expect(resume.status == 0, "\(resume.stderr)")
        try await eventually("the agent recorded the resume") {
            try await EnforcementTests.enforcement(agent, appId: appId).contains {
                $0["action"] as? String == "ack.refreeze"
            }
        }
        #expect(ProcessInfoReader.state(of: pid) == "T" || ProcessInfoReader.runState(of: pid) == .stopping)
        let audit = try await EnforcementTests.enforcement(agent, appId: appId)
        let refreeze = try #require(audit.first { $0["action"] as? String == "ack.refreeze" })
        #expect(refreeze["outcome"] as? String == "refreeze")
        let reason = refreeze["reason"] as? String ?? ""
        #expect(reason.contains("pid \(pid) ran again (a SIGCONT from another process)"), "\(reason)")
        let after = try #require(try await agent.apps().first)
        #expect(after.resumesUndone == 1)
        #expect(after.compliance == .frozen)
        let table = try await agent.cli(["apps"])
        #expect(table.stdout.contains("frozen (signals, 1 resume undone)"), "\(table.stdout)")

        // Again, and ListApps itself finds it (whichever of it and the timer comes first).
        kill(pid, SIGCONT)
        try await eventually("the second resume is undone") { try await agent.apps().first?.resumesUndone == 2 }
        try await eventually("the program is stopped again") { ProcessInfoReader.state(of: pid) == "T" }

        try await agent.unlock()
        try await eventually("the program runs again") { ProcessInfoReader.state(of: pid) == "S" }
        #expect(try await agent.apps().first?.processState == .running)
    }

    /// A third-party client (Python `varlink`) puts its child in a cgroup that already holds
    /// another process (the victim) and registers the child on its behalf, hoping the agent
    /// freezes — or kills — the whole cgroup for it.
    static let claimer = """
        import os, sys, time, varlink
        socket, cgroup = sys.argv[1], sys.argv[2]
        child = os.fork()
        if child == 0:
            time.sleep(1000)
            os._exit(0)
        with open(cgroup + "/cgroup.procs", "w") as f:
            f.write(str(child))
        with varlink.Client(address="unix:" + socket) as client:
            with client.open("io.cordon.App", namespaced=True) as app:
                print("managed", app.Register("com.example.claim", child).managed, child, flush=True)
                sys.stdin.readline()
        """

    @Test(.enabled(if: TestCgroupParent.available, TestCgroupParent.unavailableReason))
    func aSharedCgroupIsNeverFrozenOnAnAppsBehalf() async throws {
        let agent = try await EnforcementTests.agent("freeze")
        defer { agent.cleanUp() }
        let parent = try TestCgroupParent()
        defer { parent.remove() }
        try await parent.delegateToUser()
        let shared = parent.cgroup.child("shared")
        try shared.create()
        // The user may move processes into it (a cgroup of the delegated tree).
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)", shared.directory + "/cgroup.procs"])
        let victim = Process()
        victim.executableURL = URL(fileURLWithPath: "/bin/sh")
        victim.arguments = ["-c", "echo $$ > \"$0/cgroup.procs\" && exec sleep 1000", shared.directory]
        try victim.run()
        defer { kill(victim.processIdentifier, SIGKILL) }
        try await eventually("the victim is in the shared cgroup") {
            Cgroup.of(pid: victim.processIdentifier) == shared
        }

        let script = agent.home.appending("claim.py")
        try Self.claimer.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        // The claimer starts in the delegated parent (moved there as root), then runs as the user.
        let command =
            parent.enterAsRoot + UserAgent.asUser + ["/usr/bin/python3", script, agent.socketPath, shared.directory]
        let claimer = Process()
        claimer.executableURL = URL(fileURLWithPath: command[0])
        claimer.arguments = Array(command.dropFirst())
        let input = Pipe()
        claimer.standardInput = input
        let output = try LineReaderBuffer(claimer)
        try claimer.run()
        defer { kill(claimer.processIdentifier, SIGKILL) }
        try await eventually("the claimer registered its child") {
            output.snapshot.contains { $0.hasPrefix("managed") }
        }
        let line = try #require(output.snapshot.first { $0.hasPrefix("managed") })
        let child = try #require(line.split(separator: " ").last.flatMap { Int32($0) })
        defer { kill(child, SIGKILL) }
        #expect(try await agent.apps().first?.cgroup == nil, "the shared cgroup is not the app's own")

        // It never acknowledges: the agent freezes the child alone, with signals.
        _ = try await agent.cliSucceeds(["logout"])
        try await eventually("the child is stopped") { ProcessInfoReader.state(of: child) == "T" }
        #expect(try await agent.apps().first?.freezeMethod == .signals)
        #expect(shared.freezeRequested == false, "the agent froze the shared cgroup")
        #expect(shared.events()?.frozen == false)
        #expect(ProcessInfoReader.state(of: victim.processIdentifier) == "S", "the victim was stopped")
        kill(child, SIGCONT)
    }
}
