import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// `cordon run`: an unmodified program wrapped, frozen and thawed with the container. cordond,
/// `cordon run`, the program and the apps run as an ordinary user outside test mode
/// (``UserAgent``).
@Suite struct RunCommandTests {
    /// Unbound apps trusted: the wrapped programs get managed registrations.
    static let trusted = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// cordond as the user on root's `policy`, initialized and unlocked.
    static func agent(policy: String = trusted) async throws -> UserAgent {
        try await UserAgent(policy: policy)
    }

    /// Where these tests have `cordon run` freeze with signals (FreezeTests cover cgroups).
    static let signalsOnly = [Cgroup.parentEnvironmentKey: "none"]

    /// The Python prefix that unblocks every signal (the test runner blocks them) and execs the rest.
    static let unblock = [
        "-c",
        "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
    ]

    /// `cordon run` as a long-lived process of the user (signals unblocked, as from a shell);
    /// without a cgroup unless `environment` gives it a parent. `prefix` runs before `setpriv`
    /// (as root: FreezeTests move it into the cgroup delegated to the user first).
    static func start(
        _ agent: UserAgent, _ arguments: [String], environment: [String: String] = signalsOnly, prefix: [String] = []
    ) throws -> Process {
        let process = Process()
        process.environment = agent.userEnvironment.merging(environment) { $1 }
        let command =
            prefix + UserAgent.asUser + [UserAgent.python] + unblock + [Binaries.cordon.path, "run"] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = FileHandle.nullDevice
        // The wrapped program must not hold the test runner's output open.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The wrapped program's pid, once registered (`cordon apps` as the user).
    static func programPID(_ agent: UserAgent, appId: String) async throws -> Int32 {
        var pid: Int32 = 0
        try await eventually("\(appId) is registered") {
            guard let app = try await agent.apps().first(where: { $0.appId == appId }) else { return false }
            pid = Int32(app.pid)
            return true
        }
        return pid
    }

    static func state(_ pid: Int32) -> Character? { ProcessInfoReader.state(of: pid) }

    /// The wrapped program gets stdin, stdout and stderr, and no other descriptor of cordon's
    /// (no socket, no event loop).
    @Test func theProgramGetsOnlyTheStandardDescriptors() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let result = try await agent.cli(["run", "--app", "com.example.fds", "--", "ls", "-l", "/proc/self/fd"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").filter { $0.contains(" -> ") }
        let numbers = lines.compactMap { line in
            line.split(separator: " ").reversed().dropFirst(2).first.flatMap { Int($0) }
        }
        // 3 is the directory `ls` opened to list itself.
        #expect(Set(numbers) == [0, 1, 2, 3], "\(lines)")
        #expect(!lines.contains { $0.contains("socket:") || $0.contains("anon_inode:") }, "\(lines)")
        #expect(agent.terminate() == 0)
    }

    @Test func returnsTheProgramsExitCode() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let result = try await agent.cli(
            ["run", "--app", "com.example.exit", "--", "sh", "-c", "exit 7"], environment: Self.signalsOnly)
        #expect(result.status == 7, "\(result.stderr)")
        let missing = try await agent.cli(
            ["run", "--app", "com.example.x", "--", "/no/such/program"], environment: Self.signalsOnly)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot start /no/such/program"))
        #expect(agent.terminate() == 0)
    }

    @Test func freezesAndThawsTheProgramWithTheContainer() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let run = try Self.start(agent, ["--app", "com.example.sleeper", "--", "sleep", "1000"])
        defer { kill(run.processIdentifier, SIGKILL) }
        let pid = try await Self.programPID(agent, appId: "com.example.sleeper")
        defer { kill(pid, SIGKILL) }
        #expect(ProcessInfoReader.executable(of: pid) == "/usr/bin/sleep")
        try await eventually("the program runs") { Self.state(pid) == "S" }
        try await agent.cliSucceeds(["logout"])
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        // cordon run acknowledged for it: the agent itself enforced nothing.
        try await eventually("cordon run acknowledged") { try await agent.apps().first?.compliance == .compliant }
        try await agent.unlock()
        try await eventually("the program runs again") { Self.state(pid) == "S" }
        try await agent.cliSucceeds(["lock"])
        #expect(Self.state(pid) == "S", "a lock keeps the key: the program runs on")
        #expect(agent.terminate() == 0)
    }

    @Test func forwardsSignalsAndStartsFrozenWhileLocked() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        try await agent.cliSucceeds(["logout"])
        // One process, no forks: a shell would start commands through vfork and could be frozen
        // in the middle (the parent in D, not T). It says when its handler is in place.
        let ready = agent.home.appending("handler-ready")
        let script = """
            import signal, sys, time
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(42))
            open(sys.argv[1], "w").close()
            while True: time.sleep(0.05)
            """
        let run = try Self.start(agent, ["--app", "com.example.trap", "--", UserAgent.python, "-c", script, ready])
        defer { kill(run.processIdentifier, SIGKILL) }
        let pid = try await Self.programPID(agent, appId: "com.example.trap")
        // No key yet: the program waits frozen (once out of any uninterruptible sleep, state D).
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        try await agent.unlock()
        try await eventually("the program runs with its handler set") {
            Self.state(pid) != "T" && FileManager.default.fileExists(atPath: ready)
        }
        kill(run.processIdentifier, SIGTERM)
        run.waitUntilExit()
        #expect(run.terminationStatus == 42)
        #expect(agent.terminate() == 0)
    }

    @Test func aKilledSupervisorLeavesNoFrozenOrphan() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let run = try Self.start(agent, ["--app", "com.example.orphan", "--", "sleep", "1000"])
        let pid = try await Self.programPID(agent, appId: "com.example.orphan")
        defer { kill(pid, SIGKILL) }
        try await agent.cliSucceeds(["logout"])
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        kill(run.processIdentifier, SIGKILL)
        run.waitUntilExit()
        // cordond thaws and terminates it (and the kernel hangs up an orphaned, stopped group).
        try await eventually("the program is gone") { Self.state(pid) == nil || Self.state(pid) == "Z" }
        #expect(agent.terminate() == 0)
    }

    @Test func thePolicyChecksTheProgramNotCordon() async throws {
        let agent = try await Self.agent(
            policy:
                #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted", "managed": [{"id": "com.example.sleeper", "executables": ["/usr/bin/sleep"]}]}}"#
        )
        defer { agent.cleanUp() }
        let bound = try Self.start(agent, ["--app", "com.example.sleeper", "--", "sleep", "1000"])
        defer { kill(bound.processIdentifier, SIGKILL) }
        let pid = try await Self.programPID(agent, appId: "com.example.sleeper")
        defer { kill(pid, SIGKILL) }
        #expect(try await agent.apps().first?.managed == true, "sleep is the bound executable")
        let other = try Self.start(agent, ["--app", "com.example.sleeper", "--", "sh", "-c", "sleep 1000"])
        defer { kill(other.processIdentifier, SIGKILL) }
        try await eventually("the shell is registered") { try await agent.apps().count == 2 }
        let shell = try #require(try await agent.apps().first { $0.pid != Int(pid) })
        defer { kill(Int32(shell.pid), SIGKILL) }
        #expect(shell.managed == false, "a shell under the sleeper's id gets no key")
        #expect(shell.executable == "/usr/bin/dash")
        #expect(agent.terminate() == 0)
    }

    @Test func anotherProcessCannotBeRegisteredOnItsBehalf() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let apps = try agent.startApps()
        defer { apps.stop() }
        // pid 1 is no child of the app's.
        let reply = try await apps.send(["op": "register", "name": "hijack", "appId": "com.example.hijack", "pid": 1])
        #expect(varlinkError(reply) == "io.cordon.App.InvalidProcess", "registering pid 1 was accepted: \(reply)")
        #expect(varlinkParameters(reply)["pid"] as? Int == 1, "\(reply)")
        #expect(agent.terminate() == 0)
    }
}
