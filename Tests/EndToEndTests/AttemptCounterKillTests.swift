import CordonKit
import CordonProtocol
import CordonStore
import Foundation
import Testing

/// The failed-attempt counter is stored before the passcode is checked, so killing the agent
/// in the middle of a check cannot give the attempt back.
@Suite struct AttemptCounterKillTests {
    @Test func counterSurvivesKillDuringUnlock() async throws {
        // A real (slow) KDF so the check is still running when the agent is killed.
        let daemon = try await DaemonProcess.started(arguments: ["--kdf-target-ms", "1500"], fastKDF: false)
        defer { daemon.cleanUp() }
        let setup = try await daemon.client()
        try await setup.initialize(passcode: "correct-horse")

        let attacker = try await daemon.client()
        let attempt = Task { try await attacker.unlock(passcode: "wrong-guess") }
        let database = try CordonDatabase(path: daemon.databasePath, readOnly: true)
        try await eventually("the counter is on disk") { try database.loadAttempts().count == 1 }
        try await daemon.stop(signal: SIGKILL)

        // The check never answered: the agent died mid-derivation.
        let outcome = await attempt.result
        #expect(throws: CordonClientError.connectionClosed) { try outcome.get() }

        let restarted = try await DaemonProcess.started(root: daemon.root, fastKDF: false)
        let client = try await restarted.client()
        let status = try await client.status()
        #expect(status.failedAttempts == 1)
        #expect(status.state == .lockedNoKey)
        try await client.unlock(passcode: "correct-horse")
        #expect(try await client.status().failedAttempts == 0)
        try await restarted.stop()
    }

    @Test func restartedAgentStartsLockedWithoutKey() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        #expect(try await client.status().state == .unlocked)
        try await daemon.stop(signal: SIGKILL)

        let restarted = try await DaemonProcess.started(root: daemon.root)
        let again = try await restarted.client()
        #expect(try await again.status().state == .lockedNoKey)
        await #expect(throws: CordonError.passcodeRequired) { try await again.unlock(passcode: nil) }
        let database = try CordonDatabase(path: restarted.databasePath, readOnly: true)
        #expect(try database.integrityCheck() == "ok")
        try await restarted.stop()
    }
}
