import Foundation
import Testing

/// `overrides[].lock` and `overrides[].pasteboard.clearOnLock` against the real daemon: a
/// container-wide lock key in an override governs the container while its app is registered,
/// and no longer once the app is gone; `clearOnLock` follows the app that copied. cordond, the
/// CLI and the apps (one Python varlink program, ``UserApps``) run as an ordinary user
/// (``UserAgent``), outside test mode but for the case on a private system bus.
@Suite struct PerAppLockSettingsTests {
    static let vault = "com.example.vault"
    static let notes = "com.example.notes"

    static let policy = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
         "lock": {"idleTimeoutSeconds": 600, "reauthGraceSeconds": 3600, "discardKeyOnLock": false,
                  "onScreenLock": false, "onSuspend": false},
         "pasteboard": {"clearOnLock": false},
         "overrides": [{"apps": ["com.example.vault"],
                        "lock": {"idleTimeoutSeconds": 60, "reauthGraceSeconds": 0, "discardKeyOnLock": true,
                                 "onScreenLock": true, "onSuspend": true},
                        "pasteboard": {"clearOnLock": true}}]}
        """#

    /// Only `clearOnLock` in the vault's override (its `discardKeyOnLock` would revoke the key on
    /// lock, and a revocation clears the pasteboard whatever the policy).
    static let pasteboardPolicy = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "lock": {"reauthGraceSeconds": 3600},
         "pasteboard": {"clearOnLock": false},
         "overrides": [{"apps": ["com.example.vault"], "pasteboard": {"clearOnLock": true}}]}
        """#

    /// cordond as the user on root's `policy`, initialized and unlocked, and the apps' driver.
    func started(
        policy: String = Self.policy, arguments: [String] = [], testMode: Bool = false,
        environment: [String: String] = [:]
    ) async throws -> (UserAgent, UserApps) {
        let agent = try await UserAgent(
            policy: policy, arguments: arguments, testMode: testMode, environment: environment)
        do {
            return (agent, try agent.startApps())
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    /// CordonKit's `unlockWithinGrace`: `io.cordon.Agent.Unlock` without a passcode, on the app's
    /// connection; the error, if any.
    func unlockWithinGrace(_ apps: UserApps, _ name: String) async throws -> String? {
        varlinkError(try await apps.call(name, "io.cordon.Agent.Unlock"))
    }

    @Test func containerWideKeysApplyWhileTheAppIsRegistered() async throws {
        let (agent, apps) = try await started()
        defer {
            apps.stop()
            agent.cleanUp()
        }
        // Within the grace a verified managed app unlocks without the passcode.
        try await apps.register("unlocker", appId: "com.example.unlocker")
        // Base values while no app of the override is registered.
        var status = try await agent.status()
        #expect(status["idleTimeoutSeconds"] as? Int == 600)
        #expect(status["reauthGraceSeconds"] as? Int == 3600)
        try await agent.cliSucceeds(["lock"])
        #expect(
            try await agent.status()["state"] as? String == "lockedKeyHeld", "discardKeyOnLock is false in the base")
        #expect(try await unlockWithinGrace(apps, "unlocker") == nil, "within the base's grace: no passcode")

        // The vault registers: its override's container-wide keys now govern the container.
        try await apps.register("vault", appId: Self.vault)
        status = try await agent.status()
        #expect(status["idleTimeoutSeconds"] as? Int == 60)
        #expect(status["reauthGraceSeconds"] as? Int == 0)
        try await agent.cliSucceeds(["lock"])
        #expect(
            try await agent.status()["state"] as? String == "lockedNoKey",
            "the vault's discardKeyOnLock discards the key")
        #expect(try await unlockWithinGrace(apps, "unlocker") == "io.cordon.Agent.PasscodeRequired")
        try await agent.unlock()
        try await agent.cliSucceeds(["lock"])
        #expect(
            try await unlockWithinGrace(apps, "unlocker") == "io.cordon.Agent.PasscodeRequired",
            "grace 0 while the vault is registered")
        try await agent.unlock()

        // The vault leaves: back to the base.
        try await apps.send(["op": "close", "name": "vault"])
        try await eventually("the base settings return") {
            try await agent.status()["idleTimeoutSeconds"] as? Int == 600
        }
        #expect(try await agent.status()["reauthGraceSeconds"] as? Int == 3600)
        try await agent.cliSucceeds(["lock"])
        #expect(try await agent.status()["state"] as? String == "lockedKeyHeld")
        #expect(try await unlockWithinGrace(apps, "unlocker") == nil)
        #expect(agent.terminate() == 0)
    }

    @Test func clearOnLockFollowsTheAppThatCopied() async throws {
        let (agent, apps) = try await started(policy: Self.pasteboardPolicy)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        try await apps.register("unlocker", appId: "com.example.unlocker")
        try await apps.register("notes", appId: Self.notes)
        try await apps.register("vault", appId: Self.vault)
        let paste = { try await apps.call("notes", "io.cordon.Pasteboard.Paste") }
        #expect(
            varlinkError(try await apps.call("notes", "io.cordon.Pasteboard.Copy", ["content": "from notes"])) == nil)
        try await agent.cliSucceeds(["lock"])
        #expect(try await unlockWithinGrace(apps, "unlocker") == nil)
        #expect(varlinkParameters(try await paste())["content"] as? String == "from notes", "the base keeps it")

        #expect(
            varlinkError(try await apps.call("vault", "io.cordon.Pasteboard.Copy", ["content": "from the vault"]))
                == nil)
        try await agent.cliSucceeds(["lock"])
        #expect(try await unlockWithinGrace(apps, "unlocker") == nil)
        #expect(
            varlinkError(try await paste()) == "io.cordon.Pasteboard.Empty",
            "the vault's override clears what it copied")
        #expect(agent.terminate() == 0)
    }

    @Test func screenLockAndSuspendFollowTheRegisteredApp() async throws {
        let desktop = try await FakeDesktop(anyUser: true)
        defer { desktop.cleanUp() }
        // logind's lock and sleep signals come on the system bus: a private one is taken only in
        // test mode (outside it the system bus is the system's).
        let (agent, apps) = try await started(
            arguments: ["--system-bus-address", desktop.address, "--session-bus-address", desktop.address],
            testMode: true, environment: ["XDG_SESSION_ID": ""])
        defer {
            apps.stop()
            agent.cleanUp()
        }
        try await eventually("the lock triggers are active") {
            (try await agent.status()["lockTriggers"] as? [Any] ?? []).count == 6
        }
        try await desktop.waitFor("inhibit sleep delay")
        // Without the vault the base says no: the triggers are ignored (and logged so).
        try desktop.send("lock")
        try await eventually("the screen lock is ignored") { agent.log.contains("screen lock ignored") }
        try desktop.send("sleep")
        try await eventually("the suspend is ignored") { agent.log.contains("suspend ignored") }
        try desktop.send("wake")
        #expect(try await agent.status()["state"] as? String == "unlocked")

        try await apps.register("vault", appId: Self.vault)
        try desktop.send("lock")
        try await eventually("the screen lock locks") { try await agent.status()["state"] as? String != "unlocked" }
        try await agent.unlock()
        try desktop.send("sleep")
        try await eventually("the suspend locks") { try await agent.status()["state"] as? String != "unlocked" }
        try desktop.send("wake")
        try await apps.send(["op": "close", "name": "vault"])
        #expect(agent.terminate() == 0)
    }
}
