import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// Freezing that holds: a program under `cordon run` in a cgroup of its own forks a `setsid`
/// child that keeps writing to a file, and then, as an ordinary process of the same user could,
/// tries to run on while it should be frozen. cordond, `cordon run`, the program and the attacks
/// run as an ordinary user outside test mode (``UserAgent``), on a cgroup parent root delegated
/// to that user (``TestCgroupParent/delegateToUser()``).
@Suite(.enabled(if: TestCgroupParent.available, TestCgroupParent.unavailableReason))
struct FreezeTests {
    /// The pieces of one run: the agent, the cgroup parent, `cordon run`, the program, its child,
    /// the file the child writes and a control writer's file.
    struct Run {
        let agent: UserAgent
        let parent: TestCgroupParent
        let supervisor: Process
        let control: Process
        let pid: Int32
        let child: Int32
        let cgroup: Cgroup
        let output: String
        let controlOutput: String

        func cleanUp() {
            for process in [supervisor, control] where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kill(process.processIdentifier, SIGCONT)
                process.waitUntilExit()
            }
            parent.remove()
            agent.cleanUp()
        }
    }

    static let appId = "com.example.escape"

    /// Runs `command` as the user (the program's own uid: what it could do itself).
    static func asUser(_ command: [String]) async throws -> CommandResult {
        try await runCommand(URL(fileURLWithPath: UserAgent.asUser[0]), Array(UserAgent.asUser.dropFirst()) + command)
    }

    /// An agent that freezes apps 200 ms after a revocation, unlocked, and the escaping program
    /// under `cordon run` in a cgroup below a parent delegated to the user, its child writing.
    static func started() async throws -> Run {
        let agent = try await EnforcementTests.agent("freeze")
        let parent: TestCgroupParent
        do {
            parent = try TestCgroupParent()
            try await parent.delegateToUser()
        } catch {
            agent.cleanUp()
            throw error
        }
        let script = agent.home.appending("escape.py")
        try Writer.escaping.write(toFile: script, atomically: true, encoding: .utf8)
        let output = agent.home.appending("written")
        let childFile = agent.home.appending("child")
        let controlOutput = agent.system.appending("control")
        let control = try Writer.control(controlOutput)
        let supervisor = try RunCommandTests.start(
            agent, ["--app", appId, "--", UserAgent.python, script, output, childFile], environment: parent.environment,
            prefix: parent.enterAsRoot)
        let run = { (pid: Int32, child: Int32) in
            Run(
                agent: agent, parent: parent, supervisor: supervisor, control: control, pid: pid, child: child,
                cgroup: parent.appCgroup(appId, supervisor: supervisor.processIdentifier), output: output,
                controlOutput: controlOutput)
        }
        do {
            let pid = try await RunCommandTests.programPID(agent, appId: appId)
            try await eventually("the program wrote its child's pid") {
                FileManager.default.fileExists(atPath: childFile)
            }
            let child = try #require(Int32(try String(contentsOfFile: childFile, encoding: .utf8)))
            try await eventually("the child writes") { fileSize(output) > 0 }
            return run(pid, child)
        } catch {
            run(0, 0).cleanUp()
            throw error
        }
    }

    static func actions(_ agent: UserAgent) async throws -> [String] {
        try await EnforcementTests.enforcement(agent, appId: appId).compactMap { $0["action"] as? String }
    }

    @Test func theAgentFreezesTheWholeCgroupAndKeepsItFrozen() async throws {
        let run = try await Self.started()
        defer { run.cleanUp() }
        let agent = run.agent
        // The kernel reports the program and its setsid child in the cgroup cordon run made.
        #expect(Cgroup.of(pid: run.pid) == run.cgroup)
        #expect(Cgroup.of(pid: run.child) == run.cgroup, "the setsid child stays in the cgroup")
        #expect(try await agent.apps().first?.cgroup == run.cgroup.path)

        // The supervisor is stopped (the program, same user, could do it): nobody acknowledges.
        #expect(try await Self.asUser(["/bin/kill", "-STOP", "\(run.supervisor.processIdentifier)"]).status == 0)
        try await agent.cliSucceeds(["logout"])
        try await eventually("the cgroup is frozen (cgroup.events: frozen 1)") { run.cgroup.events()?.frozen == true }
        try await Writer.expectStill(run.output, control: run.controlOutput, "the setsid child is frozen too")
        let frozen = try #require(try await agent.apps().first)
        #expect(frozen.compliance == .frozen)
        #expect(frozen.freezeMethod == .cgroup)
        #expect(frozen.processState == .frozen)

        // Attack 1: SIGCONT to the program and its child from another process of the user's. It
        // is delivered (kill exits 0) and changes nothing: a frozen cgroup is not thawed by signals.
        let resume = try await Self.asUser(["/bin/kill", "-CONT", "\(run.pid)", "\(run.child)"])
        #expect(resume.status == 0)
        try await Writer.expectStill(run.output, control: run.controlOutput, "SIGCONT resumed the frozen app")
        #expect(run.cgroup.events()?.frozen == true)
        #expect(try await agent.apps().first?.resumesUndone == 0)

        // Attack 2: the user may write the cgroup's files: cgroup.freeze 0. The write succeeds;
        // the agent finds it on its next check and freezes the cgroup again.
        let thaw = try await Self.asUser(["/bin/sh", "-c", "echo 0 > \"$0\"", run.cgroup.directory + "/cgroup.freeze"])
        #expect(thaw.status == 0, "\(thaw.stderr)")
        try await eventually("the agent froze the cgroup again") {
            try await Self.actions(agent).contains("ack.refreeze")
        }
        try await eventually("frozen 1 again") { run.cgroup.events()?.frozen == true }
        try await Writer.expectStill(run.output, control: run.controlOutput, "thawing the cgroup by hand held")
        let refrozen = try #require(try await agent.apps().first)
        #expect(refrozen.resumesUndone == 1)
        let table = try await agent.cli(["apps"])
        #expect(table.stdout.contains("frozen (cgroup, 1 resume undone)"), "\(table.stdout)")

        // The key returns: the agent thaws the cgroup, and the child writes again.
        try await agent.unlock()
        try await eventually("the cgroup is thawed") { run.cgroup.events()?.frozen == false }
        let size = fileSize(run.output)
        try await eventually("the child writes again") { fileSize(run.output) > size }
        try await EnforcementTests.waitForEnforcements(agent, appId: Self.appId, count: 3)
        let audit = try await EnforcementTests.enforcement(agent, appId: Self.appId)
        #expect(audit.map { $0["action"] as? String } == ["ack.freeze", "ack.refreeze", "ack.thaw"])
        let reasons = audit.map { $0["reason"] as? String ?? "" }
        #expect(reasons.first?.hasSuffix("frozen through cgroup \(run.cgroup.path)") == true, "\(reasons)")
        #expect(
            reasons.count > 1
                && reasons[1].contains("cgroup.freeze of \(run.cgroup.path) was set to 0 by another process"),
            "\(reasons)")

        // The supervisor dies: the agent terminates the program, kills what is left in its
        // cgroup (the setsid child, which never got SIGTERM) and removes the cgroup.
        kill(run.supervisor.processIdentifier, SIGKILL)
        run.supervisor.waitUntilExit()
        try await eventually("the agent removed the cgroup") { !run.cgroup.exists }
        #expect([nil, "Z"].contains(ProcessInfoReader.state(of: run.child)))
        #expect(agent.terminate() == 0)
    }

    @Test func cordonRunsOwnFreezeHoldsAndItsCgroupGoesWithTheProgram() async throws {
        let run = try await Self.started()
        defer { run.cleanUp() }
        let agent = run.agent
        try await agent.cliSucceeds(["logout"])
        // cordon run froze the cgroup itself, then acknowledged: the app complied.
        try await eventually("cordon run froze the cgroup and acknowledged") {
            let app = try await agent.apps().first
            return app?.compliance == .compliant && app?.processState == .frozen
        }
        #expect(run.cgroup.events()?.frozen == true)
        try await Writer.expectStill(run.output, control: run.controlOutput, "the setsid child is frozen too")
        let resume = try await Self.asUser(["/bin/kill", "-CONT", "\(run.pid)", "\(run.child)"])
        #expect(resume.status == 0)
        try await Writer.expectStill(run.output, control: run.controlOutput, "SIGCONT resumed the frozen app")

        // The agent holds cordon run's freeze: the supervisor stopped (the program, same user,
        // could do it) and the cgroup thawed by hand, the agent freezes it again.
        try await eventually("the agent holds the freeze") { try await Self.actions(agent).contains("ack.hold") }
        #expect(try await Self.asUser(["/bin/kill", "-STOP", "\(run.supervisor.processIdentifier)"]).status == 0)
        let thaw = try await Self.asUser(["/bin/sh", "-c", "echo 0 > \"$0\"", run.cgroup.directory + "/cgroup.freeze"])
        #expect(thaw.status == 0, "\(thaw.stderr)")
        try await eventually("the agent froze the cgroup again") {
            try await Self.actions(agent).contains("ack.refreeze")
        }
        try await eventually("frozen 1 again") { run.cgroup.events()?.frozen == true }
        try await Writer.expectStill(run.output, control: run.controlOutput, "thawing cordon run's cgroup held")
        let held = try #require(try await agent.apps().first)
        #expect(held.compliance == .compliant, "the program complied: its supervisor froze it in time")
        #expect(held.resumesUndone == 1)
        #expect(try await Self.asUser(["/bin/kill", "-CONT", "\(run.supervisor.processIdentifier)"]).status == 0)

        try await agent.unlock()
        let size = fileSize(run.output)
        try await eventually("the child writes again") { fileSize(run.output) > size }
        try await eventually("the hold is released") { try await Self.actions(agent).contains("ack.release") }

        // SIGTERM goes to the program's group (not to the setsid child); once the program is gone,
        // cordon run kills what it left in its cgroup and removes it.
        kill(run.supervisor.processIdentifier, SIGTERM)
        run.supervisor.waitUntilExit()
        #expect(run.supervisor.terminationStatus == 128 + SIGTERM)
        #expect(!run.cgroup.exists)
        #expect([nil, "Z"].contains(ProcessInfoReader.state(of: run.child)))
        let records = try await Self.actions(agent)
        #expect(records == ["ack.hold", "ack.refreeze", "ack.release"], "\(records)")
        #expect(agent.terminate() == 0)
    }
}
