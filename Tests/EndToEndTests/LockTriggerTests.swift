import Foundation
import Testing

/// The D-Bus lock triggers against a private bus with a stand-in for logind and the screen savers.
/// cordond, the CLI and the event follower run as an ordinary user (``UserAgent``); logind is on
/// the system bus, and only test mode takes a private system bus address (outside it the system
/// bus is the system's), so the agent runs in test mode here.
@Suite struct LockTriggerTests {
    /// cordond as the user on the fake desktop's bus (both buses), with the idle timeout on
    /// (`lock` holds further keys of root's `lock` section), initialized (locked).
    func agent(on desktop: FakeDesktop, lock: String = "") async throws -> UserAgent {
        let policy = #"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 3600\#(lock)}}"#
        let agent = try await UserAgent(
            policy: policy, initialize: false,
            arguments: ["--system-bus-address", desktop.address, "--session-bus-address", desktop.address],
            testMode: true, environment: ["XDG_SESSION_ID": ""])
        do {
            try await eventually("the lock triggers are active") {
                (try await agent.status()["lockTriggers"] as? [Any] ?? []).count == 6
            }
            try await desktop.waitFor("inhibit sleep delay")
            try await agent.cliSucceeds(["init", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        } catch {
            agent.cleanUp()
            throw error
        }
        return agent
    }

    /// Takes events until one of `kind`; returns it.
    func next(_ events: EventFollower, _ kind: String) async throws -> [String: Any] {
        while true {
            let event = try await events.next("a \(kind) event")
            if event["kind"] as? String == kind { return event }
        }
    }

    /// Unlocks, fires `command` and returns the reason of the lock it caused.
    func lockReason(_ agent: UserAgent, _ desktop: FakeDesktop, _ events: EventFollower, after command: String)
        async throws -> String?
    {
        try await agent.unlock()
        _ = try await next(events, "DidUnlock")
        try desktop.send(command)
        try await eventually("\(command) locks") { try await agent.status()["state"] as? String != "unlocked" }
        return try await next(events, "DidLock")["reason"] as? String
    }

    @Test func screenLockSignalsAndIdleHintLock() async throws {
        let desktop = try await FakeDesktop(anyUser: true)
        defer { desktop.cleanUp() }
        let agent = try await agent(on: desktop)
        defer { agent.cleanUp() }
        let events = try agent.followEvents()
        defer { events.stop() }
        // Followed once the snapshot is in: no later event can be missed.
        #expect(try await events.next()["kind"] as? String == "State")
        for command in ["lock", "lockedhint", "screensaver", "gnome"] {
            #expect(try await lockReason(agent, desktop, events, after: command) == "screenLock", "\(command)")
        }
        #expect(try await lockReason(agent, desktop, events, after: "idlehint") == "idleTimeout")
        #expect(agent.terminate() == 0)
    }

    /// A subscriber (unregistered, as the user) that reads nothing: what the agent has written to
    /// it stays in its socket, where the test peeks.
    static let subscribe = """
        s = connect(sys.argv[1])
        s.sendall(json.dumps({"method": "io.cordon.App.Subscribe", "parameters": {}, "more": True}).encode() + b"\\0")
        apps["raw"] = {"control": s}
        """
    static let peek = """
        try:
            out["written"] = apps["raw"]["control"].recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT).decode()
        except BlockingIOError:
            out["written"] = ""
        """

    @Test func suspendReleasesTheInhibitorOnlyAfterDidLock() async throws {
        let desktop = try await FakeDesktop(anyUser: true)
        defer { desktop.cleanUp() }
        let agent = try await agent(on: desktop)
        defer { agent.cleanUp() }
        try await agent.unlock()
        let subscriber = try agent.startApps()
        defer { subscriber.stop() }
        try await subscriber.send(["op": "exec", "code": Self.subscribe])
        let peek = { try await subscriber.send(["op": "exec", "code": Self.peek])["written"] as? String ?? "" }
        try await eventually("subscribed") { try await peek().contains(#""kind":"State""#) }
        try desktop.send("sleep")
        try await eventually("the inhibitor is released") { desktop.standIn.snapshot.contains("released") }
        // The agent released it only once the DidLock was written: it is in the socket already.
        let written = try await peek()
        #expect(written.contains(#""kind":"DidLock""#) && written.contains(#""reason":"suspend""#), "\(written)")
        #expect(try await agent.status()["state"] as? String != "unlocked")
        // After resume a new inhibitor is taken.
        try desktop.send("wake")
        try await eventually("a new inhibitor is taken") {
            desktop.standIn.snapshot.filter { $0 == "inhibit sleep delay" }.count == 2
        }
        #expect(agent.terminate() == 0)
    }

    @Test func policyCanIgnoreTheScreenLock() async throws {
        let desktop = try await FakeDesktop(anyUser: true)
        defer { desktop.cleanUp() }
        let agent = try await agent(on: desktop, lock: #", "onScreenLock": false"#)
        defer { agent.cleanUp() }
        let events = try agent.followEvents()
        defer { events.stop() }
        #expect(try await events.next()["kind"] as? String == "State")
        // Signals on one connection arrive in order: the ignored screen saver comes first.
        try await agent.unlock()
        _ = try await next(events, "DidUnlock")
        try desktop.send("screensaver")
        try desktop.send("idlehint")
        try await eventually("the idle hint locks") { try await agent.status()["state"] as? String != "unlocked" }
        let reasons = [try await next(events, "DidLock")["reason"] as? String]
        #expect(reasons == ["idleTimeout"])
        #expect(agent.log.contains("screen lock ignored"))
        #expect(agent.terminate() == 0)
    }

    @Test func policyCanIgnoreTheIdleHint() async throws {
        let desktop = try await FakeDesktop(anyUser: true)
        defer { desktop.cleanUp() }
        let agent = try await agent(on: desktop, lock: #", "onSessionIdle": false"#)
        defer { agent.cleanUp() }
        let events = try agent.followEvents()
        defer { events.stop() }
        #expect(try await events.next()["kind"] as? String == "State")
        // Signals on one connection arrive in order: the ignored idle hint comes first.
        #expect(try await lockReason(agent, desktop, events, after: "idlehint\nscreensaver") == "screenLock")
        #expect(agent.log.contains("idle hint ignored: lock.onSessionIdle is false"))
        #expect(agent.terminate() == 0)
    }

    @Test func withoutABusTheAgentRunsAndSaysSo() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let nowhere = "unix:path=" + root.appending("no-bus.sock")
        // A system bus that is not there is named only in test mode (outside it, the system's).
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            arguments: ["--system-bus-address", nowhere, "--session-bus-address", nowhere], testMode: true)
        defer { agent.cleanUp() }
        try await eventually("the agent reports no triggers") {
            (try await agent.status()["lockTriggers"] as? [Any])?.isEmpty == true
        }
        let result = try await agent.cli(["status", "--json"])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((json?["lockTriggers"] as? [Any])?.isEmpty == true)
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("no lock triggers"))
        #expect(agent.log.contains("no D-Bus"))
        #expect(agent.terminate() == 0)
    }
}
