import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// `cordon run`: an unmodified program wrapped, frozen and thawed with the container.
@Suite struct RunCommandTests {
    static func daemon() async throws -> DaemonProcess {
        let daemon = try await DaemonProcess.started()
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        await client.close()
        return daemon
    }

    /// Where these tests have `cordon run` freeze with signals (FreezeTests cover cgroups).
    static let signalsOnly = [Cgroup.parentEnvironmentKey: "none"]

    /// `cordon run` as a long-lived process (signals unblocked, as from a shell); without a cgroup
    /// unless `environment` gives it a parent.
    static func start(
        _ daemon: DaemonProcess, _ arguments: [String], environment: [String: String] = signalsOnly
    ) throws -> Process {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let unblock =
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
        process.arguments =
            ["python3", "-c", unblock, Binaries.cordon.path, "--socket", daemon.socketPath, "run"] + arguments
        process.standardInput = FileHandle.nullDevice
        // The wrapped program must not hold the test runner's output open.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The wrapped program's pid, once registered.
    static func programPID(_ client: CordonClient, appId: String) async throws -> Int32 {
        var pid: Int32 = 0
        try await eventually("\(appId) is registered") {
            guard let app = try await client.apps().first(where: { $0.appId == appId }) else { return false }
            pid = Int32(app.pid)
            return true
        }
        return pid
    }

    static func state(_ pid: Int32) -> Character? { ProcessInfoReader.state(of: pid) }

    /// The wrapped program gets stdin, stdout and stderr, and no other descriptor of cordon's
    /// (no socket, no event loop).
    @Test func theProgramGetsOnlyTheStandardDescriptors() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let result = try await runCommand(
            Binaries.cordon,
            ["--socket", daemon.socketPath, "run", "--app", "com.example.fds", "--", "ls", "-l", "/proc/self/fd"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").filter { $0.contains(" -> ") }
        let numbers = lines.compactMap { line in
            line.split(separator: " ").reversed().dropFirst(2).first.flatMap { Int($0) }
        }
        // 3 is the directory `ls` opened to list itself.
        #expect(Set(numbers) == [0, 1, 2, 3], "\(lines)")
        #expect(!lines.contains { $0.contains("socket:") || $0.contains("anon_inode:") }, "\(lines)")
        try await daemon.stop()
    }

    @Test func returnsTheProgramsExitCode() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let result = try await runCommand(
            Binaries.cordon,
            ["--socket", daemon.socketPath, "run", "--app", "com.example.exit", "--", "sh", "-c", "exit 7"],
            environment: Self.signalsOnly)
        #expect(result.status == 7, "\(result.stderr)")
        let missing = try await runCommand(
            Binaries.cordon,
            ["--socket", daemon.socketPath, "run", "--app", "com.example.x", "--", "/no/such/program"],
            environment: Self.signalsOnly)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot start /no/such/program"))
        try await daemon.stop()
    }

    @Test func freezesAndThawsTheProgramWithTheContainer() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let run = try Self.start(daemon, ["--app", "com.example.sleeper", "--", "sleep", "1000"])
        defer { kill(run.processIdentifier, SIGKILL) }
        let client = try await daemon.client()
        let pid = try await Self.programPID(client, appId: "com.example.sleeper")
        defer { kill(pid, SIGKILL) }
        #expect(ProcessInfoReader.executable(of: pid) == "/usr/bin/sleep")
        try await eventually("the program runs") { Self.state(pid) == "S" }
        try await client.logout()
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        // cordon run acknowledged for it: the agent itself enforced nothing.
        try await eventually("cordon run acknowledged") { try await client.apps().first?.compliance == .compliant }
        try await client.unlock(passcode: "2468")
        try await eventually("the program runs again") { Self.state(pid) == "S" }
        try await client.lock()
        #expect(Self.state(pid) == "S", "a lock keeps the key: the program runs on")
        try await daemon.stop()
    }

    @Test func forwardsSignalsAndStartsFrozenWhileLocked() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.logout()
        // One process, no forks: a shell would start commands through vfork and could be frozen
        // in the middle (the parent in D, not T). It says when its handler is in place.
        let ready = daemon.root.appending("handler-ready")
        let script = """
            import signal, sys, time
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(42))
            open(sys.argv[1], "w").close()
            while True: time.sleep(0.05)
            """
        let run = try Self.start(daemon, ["--app", "com.example.trap", "--", "python3", "-c", script, ready])
        defer { kill(run.processIdentifier, SIGKILL) }
        let pid = try await Self.programPID(client, appId: "com.example.trap")
        // No key yet: the program waits frozen (once out of any uninterruptible sleep, state D).
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        try await client.unlock(passcode: "2468")
        try await eventually("the program runs with its handler set") {
            Self.state(pid) != "T" && FileManager.default.fileExists(atPath: ready)
        }
        kill(run.processIdentifier, SIGTERM)
        run.waitUntilExit()
        #expect(run.terminationStatus == 42)
        try await daemon.stop()
    }

    @Test func aKilledSupervisorLeavesNoFrozenOrphan() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let run = try Self.start(daemon, ["--app", "com.example.orphan", "--", "sleep", "1000"])
        let client = try await daemon.client()
        let pid = try await Self.programPID(client, appId: "com.example.orphan")
        defer { kill(pid, SIGKILL) }
        try await client.logout()
        try await eventually("the program is frozen") { Self.state(pid) == "T" }
        kill(run.processIdentifier, SIGKILL)
        run.waitUntilExit()
        // cordond thaws and terminates it (and the kernel hangs up an orphaned, stopped group).
        try await eventually("the program is gone") { Self.state(pid) == nil || Self.state(pid) == "Z" }
        try await daemon.stop()
    }

    @Test func thePolicyChecksTheProgramNotCordon() async throws {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try
            #"{"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "com.example.sleeper", "executables": ["/usr/bin/sleep"]}]}}"#
            .write(toFile: root.appending("admin/apps.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(root: root)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let bound = try Self.start(daemon, ["--app", "com.example.sleeper", "--", "sleep", "1000"])
        defer { kill(bound.processIdentifier, SIGKILL) }
        let pid = try await Self.programPID(client, appId: "com.example.sleeper")
        defer { kill(pid, SIGKILL) }
        #expect(try await client.apps().first?.managed == true, "sleep is the bound executable")
        let other = try Self.start(daemon, ["--app", "com.example.sleeper", "--", "sh", "-c", "sleep 1000"])
        defer { kill(other.processIdentifier, SIGKILL) }
        try await eventually("the shell is registered") { try await client.apps().count == 2 }
        let shell = try #require(try await client.apps().first { $0.pid != Int(pid) })
        defer { kill(Int32(shell.pid), SIGKILL) }
        #expect(shell.managed == false, "a shell under the sleeper's id gets no key")
        #expect(shell.executable == "/usr/bin/dash")
        try await daemon.stop()
    }

    @Test func anotherProcessCannotBeRegisteredOnItsBehalf() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        // pid 1 is no child of the test.
        do {
            _ = try await CordonApp.connect(appId: "com.example.hijack", socketPath: daemon.socketPath, process: 1)
            Issue.record("registering pid 1 was accepted")
        } catch let error as CordonError {
            guard case .invalidProcess(let pid, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(pid == 1)
        }
        try await daemon.stop()
    }
}
