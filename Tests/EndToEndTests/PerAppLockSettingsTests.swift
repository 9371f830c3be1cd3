import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `overrides[].lock` and `overrides[].pasteboard.clearOnLock` against the real daemon: a
/// container-wide lock key in an override governs the container while its app is registered,
/// and no longer once the app is gone; `clearOnLock` follows the app that copied.
@Suite struct PerAppLockSettingsTests {
    static let vault = "com.example.vault"
    static let notes = "com.example.notes"

    static let policy = #"""
        {"schema": "cordon.policy.v1",
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
        {"schema": "cordon.policy.v1", "lock": {"reauthGraceSeconds": 3600}, "pasteboard": {"clearOnLock": false},
         "overrides": [{"apps": ["com.example.vault"], "pasteboard": {"clearOnLock": true}}]}
        """#

    func started(
        policy: String = Self.policy, arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> (
        DaemonProcess, CordonClient
    ) {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: root.appending("admin"), withIntermediateDirectories: true)
        try policy.write(toFile: root.appending("admin/10-lock.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(
            root: root, arguments: arguments, environment: environment)
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        return (daemon, client)
    }

    @Test func containerWideKeysApplyWhileTheAppIsRegistered() async throws {
        let (daemon, client) = try await started()
        defer { daemon.cleanUp() }
        // Within the grace a verified managed app unlocks without the passcode.
        let unlocker = try await CordonApp.connect(appId: "com.example.unlocker", socketPath: daemon.socketPath)
        // Base values while no app of the override is registered.
        var status = try await client.status()
        #expect(status.idleTimeoutSeconds == 600)
        #expect(status.reauthGraceSeconds == 3600)
        try await client.lock()
        #expect(try await client.status().state == .lockedKeyHeld, "discardKeyOnLock is false in the base")
        try await unlocker.unlockWithinGrace()  // within the base's grace: no passcode

        // The vault registers: its override's container-wide keys now govern the container.
        let vault = try await CordonApp.connect(appId: Self.vault, socketPath: daemon.socketPath)
        status = try await client.status()
        #expect(status.idleTimeoutSeconds == 60)
        #expect(status.reauthGraceSeconds == 0)
        try await client.lock()
        #expect(try await client.status().state == .lockedNoKey, "the vault's discardKeyOnLock discards the key")
        await #expect(throws: CordonError.passcodeRequired) { try await unlocker.unlockWithinGrace() }
        try await client.unlock(passcode: "2468")
        try await client.lock()
        await #expect(throws: CordonError.passcodeRequired, "grace 0 while the vault is registered") {
            try await unlocker.unlockWithinGrace()
        }
        try await client.unlock(passcode: "2468")

        // The vault leaves: back to the base.
        await vault.close()
        try await eventually("the base settings return") { try await client.status().idleTimeoutSeconds == 600 }
        #expect(try await client.status().reauthGraceSeconds == 3600)
        try await client.lock()
        #expect(try await client.status().state == .lockedKeyHeld)
        try await unlocker.unlockWithinGrace()
        try await daemon.stop()
    }

    @Test func clearOnLockFollowsTheAppThatCopied() async throws {
        let (daemon, client) = try await started(policy: Self.pasteboardPolicy)
        defer { daemon.cleanUp() }
        let unlocker = try await CordonApp.connect(appId: "com.example.unlocker", socketPath: daemon.socketPath)
        let notes = try await CordonApp.connect(appId: Self.notes, socketPath: daemon.socketPath)
        let vault = try await CordonApp.connect(appId: Self.vault, socketPath: daemon.socketPath)
        _ = try await notes.pasteboard.copy("from notes")
        try await client.lock()
        try await unlocker.unlockWithinGrace()
        #expect(try await notes.pasteboard.paste().content == "from notes", "the base keeps it")

        _ = try await vault.pasteboard.copy("from the vault")
        try await client.lock()
        try await unlocker.unlockWithinGrace()
        await #expect(throws: CordonError.pasteboardEmpty, "the vault's override clears what it copied") {
            _ = try await notes.pasteboard.paste()
        }
        await notes.close()
        await vault.close()
        try await daemon.stop()
    }

    @Test func screenLockAndSuspendFollowTheRegisteredApp() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let (daemon, client) = try await started(
            arguments: ["--system-bus-address", desktop.address, "--session-bus-address", desktop.address],
            environment: ["XDG_SESSION_ID": ""])
        defer { daemon.cleanUp() }
        try await eventually("the lock triggers are active") {
            (try await client.status().lockTriggers ?? []).count == 6
        }
        try await desktop.waitFor("inhibit sleep delay")
        // Without the vault the base says no: the triggers are ignored (and logged so).
        try desktop.send("lock")
        try await eventually("the screen lock is ignored") { daemon.log.contains("screen lock ignored") }
        try desktop.send("sleep")
        try await eventually("the suspend is ignored") { daemon.log.contains("suspend ignored") }
        try desktop.send("wake")
        #expect(try await client.status().state == .unlocked)

        let vault = try await CordonApp.connect(appId: Self.vault, socketPath: daemon.socketPath)
        try desktop.send("lock")
        try await eventually("the screen lock locks") { try await client.status().state != .unlocked }
        try await client.unlock(passcode: "2468")
        try desktop.send("sleep")
        try await eventually("the suspend locks") { try await client.status().state != .unlocked }
        try desktop.send("wake")
        await vault.close()
        try await daemon.stop()
    }
}
