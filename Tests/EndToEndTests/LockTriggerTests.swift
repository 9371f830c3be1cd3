import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The D-Bus lock triggers against a private bus with a stand-in for logind and the screen savers.
@Suite struct LockTriggerTests {
    /// cordond on the fake desktop's bus (both buses), with the idle timeout on.
    func daemon(on desktop: FakeDesktop, root: TemporaryDirectory? = nil) async throws -> DaemonProcess {
        let daemon = try await DaemonProcess.started(
            root: root,
            arguments: [
                "--system-bus-address", desktop.address, "--session-bus-address", desktop.address,
                "--idle-timeout", "3600",
            ], environment: ["XDG_SESSION_ID": ""])
        let client = try await daemon.client()
        try await eventually("the lock triggers are active") {
            (try await client.status().lockTriggers ?? []).count == 6
        }
        try await desktop.waitFor("inhibit sleep delay")
        await client.close()
        return daemon
    }

    /// cordond on the fake desktop's bus with an admin policy whose `lock` section is `lock` (JSON).
    func daemon(on desktop: FakeDesktop, adminLock lock: String) async throws -> DaemonProcess {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "lock": \#(lock)}"#
            .write(toFile: root.appending("admin/lock.json"), atomically: true, encoding: .utf8)
        return try await daemon(on: desktop, root: root)
    }

    /// Unlocks, fires `command` and returns the reason of the lock it caused.
    func lockReason(
        _ client: CordonClient, _ desktop: FakeDesktop,
        _ events: inout AsyncThrowingStream<CordonEvent, any Error>.AsyncIterator, after command: String
    ) async throws -> EventReason? {
        try await client.unlock(passcode: "2468")
        while let event = try await events.next(), event.kind != .didUnlock {}
        try desktop.send(command)
        try await eventually("\(command) locks") { try await client.status().state != .unlocked }
        while let event = try await events.next() {
            if event.kind == .didLock { return event.reason }
        }
        return nil
    }

    @Test func screenLockSignalsAndIdleHintLock() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let daemon = try await daemon(on: desktop)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        var events = try await client.events().makeAsyncIterator()
        // Subscribed once the snapshot is in: no later event can be missed.
        #expect(try await events.next()?.kind == .state)
        for command in ["lock", "lockedhint", "screensaver", "gnome"] {
            #expect(try await lockReason(client, desktop, &events, after: command) == .screenLock, "\(command)")
        }
        #expect(try await lockReason(client, desktop, &events, after: "idlehint") == .idleTimeout)
        try await daemon.stop()
    }

    @Test func suspendReleasesTheInhibitorOnlyAfterDidLock() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let daemon = try await daemon(on: desktop)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let subscriber = try RawVarlinkSocket(path: daemon.socketPath)
        try subscriber.send(json: #"{"method":"io.cordon.App.Subscribe","parameters":{},"more":true}"#)
        try await eventually("subscribed") { subscriber.peek().contains(#""kind":"State""#) }
        try desktop.send("sleep")
        try await eventually("the inhibitor is released") { desktop.standIn.snapshot.contains("released") }
        // The agent released it only once the DidLock was written: it is in the socket already.
        let written = subscriber.peek()
        #expect(written.contains(#""kind":"DidLock""#) && written.contains(#""reason":"suspend""#), "\(written)")
        #expect(try await client.status().state != .unlocked)
        // After resume a new inhibitor is taken.
        try desktop.send("wake")
        try await eventually("a new inhibitor is taken") {
            desktop.standIn.snapshot.filter { $0 == "inhibit sleep delay" }.count == 2
        }
        try await daemon.stop()
    }

    @Test func policyCanIgnoreTheScreenLock() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let daemon = try await daemon(on: desktop, adminLock: #"{"onScreenLock": false}"#)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        var events = try await client.events().makeAsyncIterator()
        #expect(try await events.next()?.kind == .state)
        // Signals on one connection arrive in order: the ignored screen saver comes first.
        try await client.unlock(passcode: "2468")
        while let event = try await events.next(), event.kind != .didUnlock {}
        try desktop.send("screensaver")
        try desktop.send("idlehint")
        try await eventually("the idle hint locks") { try await client.status().state != .unlocked }
        var reasons: [EventReason] = []
        while let event = try await events.next() {
            if event.kind == .didLock {
                reasons.append(event.reason)
                break
            }
        }
        #expect(reasons == [.idleTimeout])
        #expect(daemon.log.contains("screen lock ignored"))
        try await daemon.stop()
    }

    @Test func policyCanIgnoreTheIdleHint() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let daemon = try await daemon(on: desktop, adminLock: #"{"onSessionIdle": false}"#)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        var events = try await client.events().makeAsyncIterator()
        #expect(try await events.next()?.kind == .state)
        // Signals on one connection arrive in order: the ignored idle hint comes first.
        #expect(try await lockReason(client, desktop, &events, after: "idlehint\nscreensaver") == .screenLock)
        #expect(daemon.log.contains("idle hint ignored: lock.onSessionIdle is false"))
        try await daemon.stop()
    }

    @Test func withoutABusTheAgentRunsAndSaysSo() async throws {
        let root = try TemporaryDirectory()
        let nowhere = "unix:path=" + root.appending("no-bus.sock")
        let daemon = try await DaemonProcess.started(
            root: root, arguments: ["--system-bus-address", nowhere, "--session-bus-address", nowhere])
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await eventually("the agent reports no triggers") { try await client.status().lockTriggers == [] }
        let result = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "status", "--json"])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((json?["lockTriggers"] as? [Any])?.isEmpty == true)
        let doctor = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "doctor"])
        #expect(doctor.stdout.contains("no lock triggers"))
        #expect(daemon.log.contains("no D-Bus"))
        try await daemon.stop()
    }
}
