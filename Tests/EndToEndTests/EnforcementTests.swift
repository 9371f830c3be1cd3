import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// The agent enforcing revocations on apps that do not acknowledge in time, through pidfds.
@Suite struct EnforcementTests {
    /// A daemon whose policy applies `action` 200 ms after a revocation, initialized and unlocked.
    static func daemon(_ action: String, deadlineMs: Int = 200) async throws -> DaemonProcess {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "lock": {"onAckTimeout": "\#(action)", "ackDeadlineMs": \#(deadlineMs)}}"#
            .write(toFile: root.appending("admin/enforce.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(root: root)
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        await client.close()
        return daemon
    }

    static func state(_ pid: Int32) -> Character? { ProcessInfoReader.state(of: pid) }

    static func enforcement(_ client: CordonClient, appId: String) async throws -> [AuditEntry] {
        try await client.audit(appId: appId).filter { $0.category == "enforcement" }
    }

    /// Enforcement records are committed after the signals are sent: waits until `count` are stored.
    static func waitForEnforcements(_ client: CordonClient, appId: String, count: Int) async throws {
        try await eventually("\(count) enforcement records for \(appId) are stored") {
            try await enforcement(client, appId: appId).count >= count
        }
    }

    @Test func anAppThatIgnoresTheRevocationIsFrozenUntilTheKeyIsBack() async throws {
        let daemon = try await Self.daemon("freeze")
        defer { daemon.cleanUp() }
        let app = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.deaf", mode: .deaf)
        defer { app.cleanUp() }
        try await app.waitFor("State")
        let client = try await daemon.client()
        let observer = try await daemon.client()
        var events = try await observer.events().makeAsyncIterator()
        #expect(try await events.next()?.kind == .state)
        try await client.logout()
        try await eventually("the app is stopped") { Self.state(app.pid) == "T" }
        #expect(try await client.apps().first?.compliance == .frozen)
        var enforced: CordonEvent?
        while let event = try await events.next() {
            if event.kind == .appEnforced {
                enforced = event
                break
            }
        }
        #expect(enforced?.appId == "com.example.deaf")
        #expect(enforced?.pid == Int(app.pid))
        #expect(enforced?.enforcement == .freeze)
        try await Self.waitForEnforcements(client, appId: "com.example.deaf", count: 1)
        let audit = try await Self.enforcement(client, appId: "com.example.deaf")
        #expect(audit.map(\.outcome) == ["freeze"])
        #expect(audit.first?.rules.contains { $0.hasSuffix("enforce.json#/lock/onAckTimeout") } == true)

        try await client.unlock(passcode: "2468")
        try await eventually("the app runs again") { Self.state(app.pid) != "T" }
        // Its key event was queued before it was thawed: the first thing it reads.
        try await app.waitFor("EncryptionKeyAvailable")
        #expect(try await client.apps().first?.compliance == .compliant)
        try await Self.waitForEnforcements(client, appId: "com.example.deaf", count: 2)
        #expect(try await Self.enforcement(client, appId: "com.example.deaf").map(\.outcome) == ["freeze", "thaw"])
        try await daemon.stop()
    }

    /// A daemon applying `action`, with one deaf app subscribed, after a logout.
    static func deafAppAfterLogout(_ action: String) async throws -> (DaemonProcess, ScriptedApp, CordonClient) {
        let daemon = try await Self.daemon(action)
        let app = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.deaf", mode: .deaf)
        try await app.waitFor("State")
        let client = try await daemon.client()
        try await client.logout()
        return (daemon, app, client)
    }

    @Test func terminateEndsTheApp() async throws {
        let (daemon, app, client) = try await Self.deafAppAfterLogout("terminate")
        defer {
            app.cleanUp()
            daemon.cleanUp()
        }
        try await eventually("the app is terminated") { !app.process.isRunning }
        #expect(app.process.terminationReason == .uncaughtSignal)
        #expect(app.process.terminationStatus == SIGTERM)
        try await Self.waitForEnforcements(client, appId: "com.example.deaf", count: 1)
        #expect(try await Self.enforcement(client, appId: "com.example.deaf").map(\.action) == ["ack.terminate"])
        try await daemon.stop()
    }

    @Test func disconnectClosesTheAppsConnections() async throws {
        let (daemon, app, client) = try await Self.deafAppAfterLogout("disconnect")
        defer {
            app.cleanUp()
            daemon.cleanUp()
        }
        try await app.waitFor("closed")
        #expect(try await client.apps().isEmpty)
        #expect(Self.state(app.pid) != "T")
        try await daemon.stop()
    }

    @Test func aShuttingDownAgentFreezesNobody() async throws {
        let daemon = try await Self.daemon("freeze")
        defer { daemon.cleanUp() }
        let app = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.deaf", mode: .deaf)
        defer { app.cleanUp() }
        try await app.waitFor("State")
        try await daemon.stop()
        // The app heard the revocation and the close, and ended by itself: it was never stopped.
        try await app.waitFor("closed")
        try await eventually("the app exits") { !app.process.isRunning }
        #expect(app.process.terminationStatus == 3)
        #expect(app.lines.contains("EncryptionKeyUnavailable"))
    }

    @Test func anAppThatAcknowledgesIsNeverTouched() async throws {
        let daemon = try await Self.daemon("freeze")
        defer { daemon.cleanUp() }
        let polite = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.polite", mode: .polite)
        defer { polite.cleanUp() }
        let deaf = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.deaf", mode: .deaf)
        defer { deaf.cleanUp() }
        try await polite.waitFor("State")
        try await deaf.waitFor("State")
        let client = try await daemon.client()
        try await client.logout()
        try await polite.waitFor("acknowledged True")
        // Both deadlines are the same: once the deaf app is frozen, the polite one's has passed too.
        try await eventually("the deaf app is stopped") { Self.state(deaf.pid) == "T" }
        #expect(Self.state(polite.pid) != "T")
        let apps = try await client.apps()
        #expect(apps.first { $0.appId == "com.example.polite" }?.compliance == .compliant)
        #expect(try await Self.enforcement(client, appId: "com.example.polite").isEmpty)
        try await daemon.stop()
    }

    @Test func leavingDuringARevocationCountsAsNotAcknowledging() async throws {
        let daemon = try await Self.daemon("freeze", deadlineMs: 600_000)
        defer { daemon.cleanUp() }
        let app = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.parent", mode: .parent)
        defer { app.cleanUp() }
        try await app.waitFor("registered")
        let child = try #require(app.lines.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        defer { kill(child, SIGKILL) }
        let client = try await daemon.client()
        try await client.logout()
        // The deadline is ten minutes away; the app goes before it.
        kill(app.pid, SIGKILL)
        // Frozen for the missed acknowledgement, then (its supervisor gone) thawed and terminated.
        try await eventually("the child is gone") { Self.state(child) == nil || Self.state(child) == "Z" }
        // The records are committed after the signals were sent: wait for both, then check them.
        try await Self.waitForEnforcements(client, appId: "com.example.parent", count: 2)
        let audit = try await Self.enforcement(client, appId: "com.example.parent")
        #expect(audit.map(\.action) == ["ack.freeze", "supervisor.lost"])
        #expect(audit.first?.reason.hasPrefix("disconnected without acknowledging") == true)
        try await daemon.stop()
    }

    @Test func aRecycledPIDIsNeverSignalled() async throws {
        let daemon = try await Self.daemon("freeze")
        defer { daemon.cleanUp() }
        let app = try ScriptedApp(socket: daemon.socketPath, appId: "com.example.parent", mode: .parent)
        defer { app.cleanUp() }
        try await app.waitFor("registered")
        let child = try #require(app.lines.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        app.send("reap")
        try await app.waitFor("reaped")
        // An unrelated process takes the registered child's PID.
        let impostor = try await Self.spawn(withPID: child, in: daemon.root)
        try #require(impostor == child, "could not recycle pid \(child)")
        defer { kill(child, SIGKILL) }
        try await app.waitFor("State")
        let client = try await daemon.client()
        try await client.logout()
        try await eventually("the agent gave up on the exited process") {
            try await Self.enforcement(client, appId: "com.example.parent").first?.outcome == "failed"
        }
        #expect(Self.state(child) == "S", "the impostor was signalled")
        try await daemon.stop()
    }

    /// Starts `sleep` with PID `pid` from a single-threaded helper that steers the kernel's next PID
    /// (root only), retrying while other processes or threads take it first; the pid it got, or 0.
    static func spawn(withPID pid: Int32, in directory: TemporaryDirectory) async throws -> Int32 {
        let script = """
            import os, sys
            target = int(sys.argv[1])
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
        let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/python3"), [path, "\(pid)"])
        return Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
