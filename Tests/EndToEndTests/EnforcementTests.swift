import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// The agent enforcing revocations on apps that do not acknowledge in time, through pidfds.
/// cordond, the CLI, the event follower and the apps (``ScriptedApp``, Python) run as an ordinary
/// user outside test mode (``UserAgent``): the agent signals only what that user may.
@Suite struct EnforcementTests {
    /// A daemon whose policy (root's `enforce.json`) applies `action` 200 ms after a revocation,
    /// initialized and unlocked; unbound apps are trusted.
    static func agent(_ action: String, deadlineMs: Int = 200) async throws -> UserAgent {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        do {
            try await agent.applyAdminPolicy(
                #"{"schema": "cordon.policy.v1", "lock": {"onAckTimeout": "\#(action)", "ackDeadlineMs": \#(deadlineMs)}}"#,
                name: "enforce.json")
        } catch {
            agent.cleanUp()
            throw error
        }
        return agent
    }

    /// A scripted app run as the user.
    static func app(_ agent: UserAgent, _ appId: String, _ mode: ScriptedApp.Mode) throws -> ScriptedApp {
        try ScriptedApp(
            socket: agent.socketPath, appId: appId, mode: mode, interpreter: UserAgent.asUser + [UserAgent.python])
    }

    static func state(_ pid: Int32) -> Character? { ProcessInfoReader.state(of: pid) }

    /// The enforcement records about `appId` (`cordon audit --json --app`).
    static func enforcement(_ agent: UserAgent, appId: String) async throws -> [[String: Any]] {
        try await agent.audit(appId: appId).filter { $0["category"] as? String == "enforcement" }
    }

    /// Enforcement records are committed after the signals are sent: waits until `count` are stored.
    static func waitForEnforcements(_ agent: UserAgent, appId: String, count: Int) async throws {
        try await eventually("\(count) enforcement records for \(appId) are stored") {
            try await enforcement(agent, appId: appId).count >= count
        }
    }

    @Test func anAppThatIgnoresTheRevocationIsFrozenUntilTheKeyIsBack() async throws {
        let agent = try await Self.agent("freeze")
        defer { agent.cleanUp() }
        let app = try Self.app(agent, "com.example.deaf", .deaf)
        defer { app.cleanUp() }
        try await app.waitFor("State")
        let events = try agent.followEvents()
        defer { events.stop() }
        #expect(try await events.next()["kind"] as? String == "State")
        try await agent.cliSucceeds(["logout"])
        try await eventually("the app is stopped") { Self.state(app.pid) == "T" }
        #expect(try await agent.apps().first?.compliance == .frozen)
        var enforced: [String: Any] = [:]
        while true {
            let event = try await events.next("the AppEnforced event")
            if event["kind"] as? String == "AppEnforced" {
                enforced = event
                break
            }
        }
        #expect(enforced["appId"] as? String == "com.example.deaf")
        #expect(enforced["pid"] as? Int == Int(app.pid))
        #expect(enforced["enforcement"] as? String == "freeze")
        try await Self.waitForEnforcements(agent, appId: "com.example.deaf", count: 1)
        let audit = try await Self.enforcement(agent, appId: "com.example.deaf")
        #expect(audit.map { $0["outcome"] as? String } == ["freeze"])
        let rules = audit.first?["rules"] as? [String] ?? []
        #expect(rules.contains { $0.hasSuffix("enforce.json#/lock/onAckTimeout") }, "\(rules)")

        try await agent.unlock()
        try await eventually("the app runs again") { Self.state(app.pid) != "T" }
        // Its key event was queued before it was thawed: the first thing it reads.
        try await app.waitFor("EncryptionKeyAvailable")
        #expect(try await agent.apps().first?.compliance == .compliant)
        try await Self.waitForEnforcements(agent, appId: "com.example.deaf", count: 2)
        #expect(
            try await Self.enforcement(agent, appId: "com.example.deaf").map { $0["outcome"] as? String } == [
                "freeze", "thaw",
            ])
        #expect(agent.terminate() == 0)
    }

    /// A daemon applying `action`, with one deaf app subscribed, after a logout.
    static func deafAppAfterLogout(_ action: String) async throws -> (UserAgent, ScriptedApp) {
        let agent = try await Self.agent(action)
        do {
            let app = try Self.app(agent, "com.example.deaf", .deaf)
            try await app.waitFor("State")
            try await agent.cliSucceeds(["logout"])
            return (agent, app)
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    @Test func terminateEndsTheApp() async throws {
        let (agent, app) = try await Self.deafAppAfterLogout("terminate")
        defer {
            app.cleanUp()
            agent.cleanUp()
        }
        try await eventually("the app is terminated") { !app.process.isRunning }
        #expect(app.process.terminationReason == .uncaughtSignal)
        #expect(app.process.terminationStatus == SIGTERM)
        try await Self.waitForEnforcements(agent, appId: "com.example.deaf", count: 1)
        #expect(
            try await Self.enforcement(agent, appId: "com.example.deaf").map { $0["action"] as? String } == [
                "ack.terminate"
            ])
        #expect(agent.terminate() == 0)
    }

    @Test func disconnectClosesTheAppsConnections() async throws {
        let (agent, app) = try await Self.deafAppAfterLogout("disconnect")
        defer {
            app.cleanUp()
            agent.cleanUp()
        }
        try await app.waitFor("closed")
        #expect(try await agent.apps().isEmpty)
        #expect(Self.state(app.pid) != "T")
        #expect(agent.terminate() == 0)
    }

    @Test func aShuttingDownAgentFreezesNobody() async throws {
        let agent = try await Self.agent("freeze")
        defer { agent.cleanUp() }
        let app = try Self.app(agent, "com.example.deaf", .deaf)
        defer { app.cleanUp() }
        try await app.waitFor("State")
        #expect(agent.terminate() == 0)
        // The app heard the revocation and the close, and ended by itself: it was never stopped.
        try await app.waitFor("closed")
        try await eventually("the app exits") { !app.process.isRunning }
        #expect(app.process.terminationStatus == 3)
        #expect(app.lines.contains("EncryptionKeyUnavailable"))
    }

    @Test func anAppThatAcknowledgesIsNeverTouched() async throws {
        let agent = try await Self.agent("freeze")
        defer { agent.cleanUp() }
        let polite = try Self.app(agent, "com.example.polite", .polite)
        defer { polite.cleanUp() }
        let deaf = try Self.app(agent, "com.example.deaf", .deaf)
        defer { deaf.cleanUp() }
        try await polite.waitFor("State")
        try await deaf.waitFor("State")
        try await agent.cliSucceeds(["logout"])
        try await polite.waitFor("acknowledged True")
        // Both deadlines are the same: once the deaf app is frozen, the polite one's has passed too.
        try await eventually("the deaf app is stopped") { Self.state(deaf.pid) == "T" }
        #expect(Self.state(polite.pid) != "T")
        let apps = try await agent.apps()
        #expect(apps.first { $0.appId == "com.example.polite" }?.compliance == .compliant)
        #expect(try await Self.enforcement(agent, appId: "com.example.polite").isEmpty)
        #expect(agent.terminate() == 0)
    }

    @Test func leavingDuringARevocationCountsAsNotAcknowledging() async throws {
        let agent = try await Self.agent("freeze", deadlineMs: 600_000)
        defer { agent.cleanUp() }
        let app = try Self.app(agent, "com.example.parent", .parent)
        defer { app.cleanUp() }
        try await app.waitFor("registered")
        let child = try #require(app.lines.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        defer { kill(child, SIGKILL) }
        try await agent.cliSucceeds(["logout"])
        // The deadline is ten minutes away; the app goes before it.
        kill(app.pid, SIGKILL)
        // Frozen for the missed acknowledgement, then (its supervisor gone) thawed and terminated.
        try await eventually("the child is gone") { Self.state(child) == nil || Self.state(child) == "Z" }
        // The records are committed after the signals were sent: wait for both, then check them.
        try await Self.waitForEnforcements(agent, appId: "com.example.parent", count: 2)
        let audit = try await Self.enforcement(agent, appId: "com.example.parent")
        #expect(audit.map { $0["action"] as? String } == ["ack.freeze", "supervisor.lost"])
        #expect((audit.first?["reason"] as? String)?.hasPrefix("disconnected without acknowledging") == true)
        #expect(agent.terminate() == 0)
    }

    @Test func aRecycledPIDIsNeverSignalled() async throws {
        let agent = try await Self.agent("freeze")
        defer { agent.cleanUp() }
        let app = try Self.app(agent, "com.example.parent", .parent)
        defer { app.cleanUp() }
        try await app.waitFor("registered")
        let child = try #require(app.lines.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        app.send("reap")
        try await app.waitFor("reaped")
        // An unrelated process of the same user (one the agent could signal) takes the
        // registered child's PID.
        let impostor = try await Self.spawn(withPID: child, in: agent.system)
        try #require(impostor == child, "could not recycle pid \(child)")
        defer { kill(child, SIGKILL) }
        try await app.waitFor("State")
        try await agent.cliSucceeds(["logout"])
        try await eventually("the agent gave up on the exited process") {
            try await Self.enforcement(agent, appId: "com.example.parent").first?["outcome"] as? String == "failed"
        }
        #expect(Self.state(child) == "S", "the impostor was signalled")
        #expect(agent.terminate() == 0)
    }

    /// Starts `sleep` as the test user with PID `pid` from a single-threaded helper that steers
    /// the kernel's next PID (root only: the helper is root's, the child drops to the user before
    /// it execs), retrying while other processes or threads take it first; the pid it got, or 0.
    static func spawn(withPID pid: Int32, in directory: TemporaryDirectory) async throws -> Int32 {
        let script = """
            import os, sys
            target, uid, gid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
            for _ in range(20000):
                with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                    f.write(str(target - 1))
                child = os.fork()
                if child == 0:
                    os.setsid()
                    null = os.open("/dev/null", os.O_RDWR)
                    for fd in (0, 1, 2):
                        os.dup2(null, fd)
                    # Nothing of the test's pipes may stay open in the impostor.
                    os.closerange(3, 65536)
                    os.setgroups([])
                    os.setgid(gid)
                    os.setuid(uid)
                    os.execv("/bin/sleep", ["sleep", "1000"])
                if child == target:
                    print(child)
                    sys.exit(0)
                os.kill(child, 9)
                os.waitpid(child, 0)
            print(0)
            """
        let path = directory.appending("recycle.py")
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"), [path, "\(pid)", UserAgent.uid, TestUser.gid])
        return Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
