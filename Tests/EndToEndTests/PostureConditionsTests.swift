import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Conditional launch from the device's posture against the real daemon, its checks read under a
/// fixture tree (`--posture-root`): `block` refuses a registration, a check that starts failing
/// revokes a registered app's key with reason `posture` (on the periodic reading and on resume),
/// `warn` sends `PostureWarning`, `wipe` erases the app's records.
@Suite struct PostureConditionsTests {
    static let app = "com.example.vault"

    /// A fixture tree where only Secure Boot is answered: on (`true`) or off.
    final class Fixture {
        let root: TemporaryDirectory
        init(secureBoot: Bool) throws {
            root = try TemporaryDirectory()
            try set(secureBoot: secureBoot)
        }
        func set(secureBoot: Bool) throws {
            let path = root.appending("sys/firmware/efi/efivars")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let file = path + "/SecureBoot-8be4df61-93ca-11d2-aa0d-e00e98032b8c"
            // Written whole, then renamed: a reading never sees half a file.
            try Data([6, 0, 0, 0, secureBoot ? 1 : 0]).write(to: URL(fileURLWithPath: file), options: .atomic)
        }
    }

    /// cordond reading `fixture`, with `conditions` (JSON members) and `more` members in an admin
    /// file, unlocked.
    static func started(
        _ fixture: Fixture, conditions: String, more: String = "", interval: String = "3600",
        arguments: [String] = []
    ) async throws -> (DaemonProcess, CordonClient) {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "conditions": {\#(conditions)}\#(more)}"#
            .write(toFile: root.appending("admin/20-posture.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(
            root: root,
            arguments: ["--posture-root", fixture.root.path, "--posture-interval", interval] + arguments)
        let client = try await daemon.client()
        _ = try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        return (daemon, client)
    }

    /// The next event of `kind` (earlier ones are skipped).
    static func next(
        _ kind: EventKind, _ events: inout AsyncStream<CordonEvent>.AsyncIterator
    ) async -> CordonEvent? {
        while let event = await events.next() {
            if event.kind == kind { return event }
        }
        return nil
    }

    @Test func blockRefusesTheRegistrationNamingTheCheck() async throws {
        let fixture = try Fixture(secureBoot: false)
        defer { fixture.root.remove() }
        let (daemon, client) = try await Self.started(fixture, conditions: #""secureBoot": "block""#)
        defer { daemon.cleanUp() }
        await #expect(
            throws: CordonError.postureRefused(
                appId: Self.app, check: "secureBoot", evidence: "SecureBoot EFI variable: 0")
        ) { _ = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath) }
        // The same check passing lets it in; the refusal was audited with the rule.
        try fixture.set(secureBoot: true)
        try await eventually("the next reading passes") {
            try await client.posture().first { $0.check == .secureBoot }?.status == .pass
        }
        let app = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath)
        _ = try await app.key()
        let audit = try await runCommand(
            Binaries.cordon, ["--socket", daemon.socketPath, "audit", "--json"])
        #expect(audit.stdout.contains("posture.register"), "\(audit.stdout) \(audit.stderr)")
        #expect(audit.stdout.contains("20-posture.json#/conditions/secureBoot"), "\(audit.stdout)")
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func theKernelMinimumComesFromThePolicy() async throws {
        let fixture = try Fixture(secureBoot: true)
        defer { fixture.root.remove() }
        try FileManager.default.createDirectory(
            atPath: fixture.root.appending("proc/sys/kernel"), withIntermediateDirectories: true)
        try "6.1.0-13-amd64\n".write(
            toFile: fixture.root.appending("proc/sys/kernel/osrelease"), atomically: true, encoding: .utf8)
        let (daemon, client) = try await Self.started(
            fixture, conditions: #""kernelVersion": "block", "minimumVersions": ["kernel 6.6"]"#)
        defer { daemon.cleanUp() }
        await #expect(
            throws: CordonError.postureRefused(
                appId: Self.app, check: "kernelVersion", evidence: "kernel 6.1.0-13-amd64, minimum 6.6")
        ) { _ = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath) }
        await client.close()
        try await daemon.stop()
    }

    @Test func aCheckThatStartsFailingRevokesTheKeyWithReasonPosture() async throws {
        let fixture = try Fixture(secureBoot: true)
        defer { fixture.root.remove() }
        // Read every 0.2 s while an app is registered.
        let (daemon, client) = try await Self.started(fixture, conditions: #""secureBoot": "block""#, interval: "0.2")
        defer { daemon.cleanUp() }
        let app = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath)
        var events = app.events.makeAsyncIterator()
        _ = try await app.key()

        try fixture.set(secureBoot: false)
        let revoked = try #require(await Self.next(.encryptionKeyUnavailable, &events))
        #expect(revoked.reason == .posture)
        #expect(revoked.appId == Self.app)
        #expect(revoked.posture?.map(\.check) == [.secureBoot])
        await #expect(
            throws: CordonError.postureRefused(
                appId: Self.app, check: "secureBoot", evidence: "SecureBoot EFI variable: 0")
        ) {
            _ = try await app.key()
        }
        // The container itself stays unlocked: only this app lost its key.
        #expect(try await client.status().state == .unlocked)
        // The container's key revoked and back (logout, unlock) is not this app's: the broadcast
        // `EncryptionKeyAvailable` is withheld from it.
        try await client.logout()
        try await client.unlock(passcode: "2468")

        // Passing again gives the key back: the first `EncryptionKeyAvailable` it hears.
        try fixture.set(secureBoot: true)
        let restored = try #require(await Self.next(.encryptionKeyAvailable, &events))
        #expect(restored.reason == .posture)
        _ = try await app.key()
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    /// A posture revocation is enforced as any other: an app that ignores it is frozen at the
    /// deadline, stays frozen when the user locks and unlocks the container, and thaws only when
    /// the check passes again (its key event queued first).
    @Test func anAppThatIgnoresAPostureRevocationIsFrozenUntilTheCheckPasses() async throws {
        let fixture = try Fixture(secureBoot: true)
        defer { fixture.root.remove() }
        let (daemon, client) = try await Self.started(
            fixture, conditions: #""secureBoot": "block""#,
            more: #", "lock": {"onAckTimeout": "freeze", "ackDeadlineMs": 200}"#, interval: "0.2")
        defer { daemon.cleanUp() }
        let app = try ScriptedApp(socket: daemon.socketPath, appId: Self.app, mode: .deaf)
        defer { app.cleanUp() }
        try await app.waitFor("State")
        try fixture.set(secureBoot: false)
        try await eventually("the app is stopped") { EnforcementTests.state(app.pid) == "T" }
        #expect(try await client.apps().first { $0.appId == Self.app }?.compliance == .frozen)
        // The container's key revoked and given back (logout, unlock) is the container's, not
        // this app's: it stays frozen.
        try await client.logout()
        try await client.unlock(passcode: "2468")
        #expect(try await client.status().state == .unlocked)
        #expect(EnforcementTests.state(app.pid) == "T", "a posture-blocked app stays frozen through an unlock")
        try fixture.set(secureBoot: true)
        try await eventually("the app runs again") { EnforcementTests.state(app.pid) != "T" }
        // Its key event was queued before it was thawed.
        try await app.waitFor("EncryptionKeyAvailable")
        try await eventually("the thaw is audited") {
            try await EnforcementTests.enforcement(client, appId: Self.app).map(\.outcome).last == "thaw"
        }
        #expect(try await EnforcementTests.enforcement(client, appId: Self.app).first?.outcome == "freeze")
        await client.close()
        try await daemon.stop()
    }

    @Test func resumeFromSuspendReadsThePostureAgain() async throws {
        let desktop = try await FakeDesktop()
        defer { desktop.cleanUp() }
        let fixture = try Fixture(secureBoot: true)
        defer { fixture.root.remove() }
        // No periodic reading within the test: only the resume can notice.
        let (daemon, client) = try await Self.started(
            fixture, conditions: #""secureBoot": "block""#,
            arguments: ["--system-bus-address", desktop.address, "--session-bus-address", desktop.address])
        defer { daemon.cleanUp() }
        try await desktop.waitFor("inhibit sleep delay")
        let app = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath)
        var events = app.events.makeAsyncIterator()
        _ = try await app.key()
        try fixture.set(secureBoot: false)
        try desktop.send("wake")
        let revoked = try #require(await Self.next(.encryptionKeyUnavailable, &events))
        #expect(revoked.reason == .posture)
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func warnSendsPostureWarningWithTheEvidence() async throws {
        let fixture = try Fixture(secureBoot: false)
        defer { fixture.root.remove() }
        let (daemon, client) = try await Self.started(fixture, conditions: #""secureBoot": "warn""#)
        defer { daemon.cleanUp() }
        let app = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath)
        var events = app.events.makeAsyncIterator()
        let warning = try #require(await Self.next(.postureWarning, &events))
        #expect(warning.reason == .posture)
        #expect(warning.posture == [PostureResult(.secureBoot, .fail, "SecureBoot EFI variable: 0")])
        _ = try await app.key()  // a warning only
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func wipeErasesTheAppsRecords() async throws {
        let fixture = try Fixture(secureBoot: true)
        defer { fixture.root.remove() }
        // Wipe for the vault only (an override); the other app merely warns.
        let (daemon, client) = try await Self.started(
            fixture, conditions: #""secureBoot": "warn""#,
            more: #", "overrides": [{"apps": ["com.example.vault"], "conditions": {"secureBoot": "wipe"}}]"#,
            interval: "0.2")
        defer { daemon.cleanUp() }
        let other = try await CordonApp.connect(appId: "com.example.other", socketPath: daemon.socketPath)
        let app = try await CordonApp.connect(appId: Self.app, socketPath: daemon.socketPath)
        let dataDirectory = daemon.root.appending("data")
        try await SecureStore(app: app, dataDirectory: dataDirectory).put("note", Data("secret".utf8))
        try await SecureStore(app: other, dataDirectory: dataDirectory).put("note", Data("kept".utf8))
        var events = app.events.makeAsyncIterator()

        try fixture.set(secureBoot: false)
        let wiped = try #require(await Self.next(.wiped, &events))
        #expect(wiped.appId == Self.app)
        try fixture.set(secureBoot: true)
        try await eventually("the key comes back") { (try? await app.key()) != nil }
        #expect(try await SecureStore(app: app, dataDirectory: dataDirectory).get("note") == nil)
        // Selective: the other app's record is untouched.
        #expect(try await SecureStore(app: other, dataDirectory: dataDirectory).get("note") == Data("kept".utf8))
        await app.close()
        await other.close()
        await client.close()
        try await daemon.stop()
    }
}
