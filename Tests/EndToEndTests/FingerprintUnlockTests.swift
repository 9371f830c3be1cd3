import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Fingerprint unlock against the real fprintd on libfprint's virtual device, on a private
/// system bus (docs/THREAT-MODEL.md, "Fingerprint unlock").
@Suite(.serialized) struct FingerprintUnlockTests {
    static let passcode = "2468"

    /// cordond with `passcode.biometrics` as given, on the fake system bus.
    func daemon(_ bus: FakeFingerprintBus, biometrics: String = "allowed", root: TemporaryDirectory? = nil)
        async throws -> DaemonProcess
    {
        let root = try root ?? TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "passcode": {"biometrics": "\#(biometrics)"}}"#
            .write(toFile: root.appending("admin/biometrics.json"), atomically: true, encoding: .utf8)
        return try await DaemonProcess.started(
            root: root,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "CORDON_SYSTEM_BUS_ADDRESS": bus.address])
    }

    /// Initializes, unlocks with the passcode and opts in.
    func optedIn(_ client: CordonClient) async throws {
        try await client.initialize(passcode: Self.passcode)
        try await client.unlock(passcode: Self.passcode)
        try await client.setBiometrics(enabled: true, passcode: Self.passcode)
    }

    /// Runs `unlockWithFingerprint` while `finger` is scanned; returns its error, if any.
    func fingerprintUnlock(_ client: CordonClient, _ bus: FakeFingerprintBus, finger: String, forgeFirst: Bool = false)
        async throws -> CordonError?
    {
        let started = bus.verificationsStarted
        let call = Task { () -> CordonError? in
            do {
                try await client.unlockWithFingerprint()
                return nil
            } catch let error as CordonError {
                return error
            }
        }
        try await eventually("fprintd starts verification") { bus.verificationsStarted > started }
        if forgeFirst {
            try bus.send("forge")
            try await bus.waitFor("forged")
        }
        try await bus.scan(finger, atVerification: started + 1)
        return try await call.value
    }

    @Test func aMatchingFingerUnlocksAndAppsGetTheirKeysAgain() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let daemon = try await daemon(bus)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await optedIn(client)
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let key = try await app.key()
        // Logout revokes: the key is discarded and apps are told; the app gets no key while locked.
        try await client.logout()
        #expect(try await client.status().state == .lockedNoKey)
        await #expect(throws: CordonError.self) { _ = try await app.key() }
        #expect(try await fingerprintUnlock(client, bus, finger: "finger-a") == nil)
        #expect(try await client.status().state == .unlocked)
        #expect(try await app.key() == key)
        #expect(daemon.log.contains("unlocked with a fingerprint"))
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func aNonMatchingFingerDoesNotUnlockAndCountsAsAFailedAttempt() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let daemon = try await daemon(bus)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await optedIn(client)
        try await client.logout()
        let before = try await client.status().failedAttempts
        let error = try await fingerprintUnlock(client, bus, finger: "finger-b")
        guard case .wrongPasscode(let left, _) = error else {
            Issue.record("expected WrongPasscode, got \(String(describing: error))")
            return
        }
        let status = try await client.status()
        #expect(status.state == .lockedNoKey)
        #expect(status.failedAttempts == before + 1)
        #expect(left == status.maxAttempts - status.failedAttempts)
        // The passcode still unlocks.
        try await client.unlock(passcode: Self.passcode)
        #expect(try await client.status().state == .unlocked)
        await client.close()
        try await daemon.stop()
    }

    @Test func aForgedVerifyStatusFromAnotherSenderIsIgnored() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let daemon = try await daemon(bus)
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await optedIn(client)
        try await client.logout()
        // A same-user process on the bus says "verify-match, done" on fprintd's device path first;
        // then the real reader scans a finger that does not match.
        let error = try await fingerprintUnlock(client, bus, finger: "finger-b", forgeFirst: true)
        guard case .wrongPasscode = error else {
            Issue.record("expected WrongPasscode, got \(String(describing: error))")
            return
        }
        #expect(try await client.status().state == .lockedNoKey)
        #expect(daemon.log.contains("ignored VerifyStatus signals from a sender that does not own"))
        await client.close()
        try await daemon.stop()
    }

    @Test func theFirstUnlockAfterStartNeedsThePasscode() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let root = try TemporaryDirectory()
        var daemon = try await daemon(bus, root: root)
        defer { daemon.cleanUp() }
        var client = try await daemon.client()
        try await optedIn(client)
        await client.close()
        try await daemon.stop()
        daemon = try await self.daemon(bus, root: root)
        client = try await daemon.client()
        await #expect(
            throws: CordonError.biometricsPasscodeNeeded(
                reason: "no passcode unlock since the agent started (or since fingerprint unlock was turned on)")
        ) {
            try await client.unlockWithFingerprint()
        }
        // The opt-in survived the restart: after a passcode unlock, a finger unlocks again.
        try await client.unlock(passcode: Self.passcode)
        try await client.logout()
        #expect(try await fingerprintUnlock(client, bus, finger: "finger-a") == nil)
        await client.close()
        try await daemon.stop()
    }

    @Test func disabledPolicyAndOptedOutRefuseWithTypedErrors() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let disabled = try await daemon(bus, biometrics: "disabled")
        defer { disabled.cleanUp() }
        var client = try await disabled.client()
        try await client.initialize(passcode: Self.passcode)
        try await client.unlock(passcode: Self.passcode)
        await #expect(throws: CordonError.biometricsDisabled) {
            try await client.setBiometrics(enabled: true, passcode: Self.passcode)
        }
        try await client.logout()
        await #expect(throws: CordonError.biometricsDisabled) { try await client.unlockWithFingerprint() }
        await client.close()
        try await disabled.stop()

        let allowed = try await daemon(bus)
        defer { allowed.cleanUp() }
        client = try await allowed.client()
        try await optedIn(client)
        try await client.setBiometrics(enabled: false)
        try await client.logout()
        await #expect(throws: CordonError.biometricsNotEnabled) { try await client.unlockWithFingerprint() }
        // Opting out zeroed the kept key: opting in again needs a passcode unlock first.
        #expect(allowed.log.contains("the user opted out"))
        #expect(bus.verificationsStarted == 0)
        await client.close()
        try await allowed.stop()
    }

    /// `cordon biometrics on|off` and `cordon unlock --fingerprint`, falling back to the passcode.
    @Test func theCommandLineOptsInAndFallsBackToThePasscode() async throws {
        let bus = try await FakeFingerprintBus()
        defer { bus.cleanUp() }
        let daemon = try await daemon(bus)
        defer { daemon.cleanUp() }
        func cordon(_ arguments: [String], input: String? = nil) async throws -> CommandResult {
            try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath] + arguments, input: input)
        }
        #expect(try await cordon(["init", "--passcode-stdin"], input: "2468\n").status == 0)
        // Not turned on: the finger is not asked for; the passcode from stdin unlocks.
        let first = try await cordon(["unlock", "--fingerprint", "--passcode-stdin"], input: "2468\n")
        #expect(first.status == 0)
        #expect(first.stderr.contains("fingerprint unlock is not turned on"))
        #expect(first.stdout.contains("unlocked"))
        let on = try await cordon(["biometrics", "on", "--passcode-stdin"], input: "2468\n")
        #expect(on.status == 0, "\(on.stderr)")
        #expect(try await cordon(["logout"]).status == 0)
        let started = bus.verificationsStarted
        let unlocking = Task { try await cordon(["unlock", "--fingerprint", "--passcode-stdin"], input: "") }
        try await bus.scan("finger-a", atVerification: started + 1)
        let unlocked = try await unlocking.value
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try await daemon.client().status().state == .unlocked)
        let off = try await cordon(["biometrics", "off"])
        #expect(off.status == 0)
        #expect(off.stdout.contains("fingerprint unlock off"))
        try await daemon.stop()
    }
}
