import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The managed pasteboard against the real daemon: every copyOut level between two managed apps,
/// unmanaged clients kept out, the character limit, and clearing on lock and on revocation.
@Suite struct PasteboardTests {
    /// Whether a paste from one managed app into another is allowed, by level. Only verified
    /// managed registrations reach the managed pasteboard at all (docs/THREAT-MODEL.md); the
    /// levels for unmanaged parties are what `Check` answers an app deciding about the system
    /// clipboard.
    static let expected: [String: Bool] = ["blocked": false, "managed": true, "managedWithPasteIn": true, "any": true]

    struct Fixture {
        let daemon: DaemonProcess
        let client: CordonClient
        let source: CordonApp
        let target: CordonApp

        func apply(_ policy: String) async throws {
            try policy.write(
                toFile: daemon.adminPolicyDirectory + "/pasteboard.json", atomically: true, encoding: .utf8)
            _ = try await client.reloadPolicy()
        }

        func close() async {
            await source.close()
            await target.close()
            await client.close()
        }
    }

    static func fixture() async throws -> Fixture {
        let daemon = try await DaemonProcess.started()
        try FileManager.default.createDirectory(atPath: daemon.adminPolicyDirectory, withIntermediateDirectories: true)
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let source = try await CordonApp.connect(appId: "com.example.source", socketPath: daemon.socketPath)
        let target = try await CordonApp.connect(appId: "com.example.target", socketPath: daemon.socketPath)
        return Fixture(daemon: daemon, client: client, source: source, target: target)
    }

    static func policy(level: String, maxChars: Int = 1000, clearOnLock: Bool = false) -> String {
        #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "\#(level)", "maxChars": \#(maxChars), "#
            + #""clearOnLock": \#(clearOnLock)}}"#
    }

    @Test func everyLevelBetweenManagedAppsAndUnmanagedClientsKeptOut() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.daemon.cleanUp() }
        for (level, allowed) in Self.expected.sorted(by: { $0.key < $1.key }) {
            try await fixture.apply(Self.policy(level: level))
            let text = "secret at \(level)"
            _ = try await fixture.source.pasteboard.copy(text)
            do {
                let pasted = try await fixture.target.pasteboard.paste()
                #expect(allowed, "\(level): the paste was allowed")
                #expect(pasted.content == text)
                #expect(pasted.source == "com.example.source")
            } catch CordonError.denied(let action, let reason, let rules) {
                #expect(!allowed, "\(level): the paste was denied: \(reason)")
                #expect(action == "pasteboard.paste")
                #expect(rules.contains { $0.contains("pasteboard.json#/pasteboard/copyOut") }, "\(rules)")
            }
            // A client that registered no app reaches neither end, whatever the level.
            await #expect(throws: CordonError.notRegistered) { _ = try await fixture.client.pasteboard.paste() }
            await #expect(throws: CordonError.notRegistered) { _ = try await fixture.client.pasteboard.copy("x") }
            // An app may always paste what it copied itself.
            _ = try await fixture.source.pasteboard.copy("mine")
            #expect(try await fixture.source.pasteboard.paste().content == "mine", "\(level)")
        }
        #expect(!fixture.daemon.log.contains("secret for"), "pasteboard content never reaches the log")
        let denials = try await fixture.client.audit().filter {
            $0.action == "pasteboard.paste" && $0.outcome == "deny"
        }
        #expect(denials.count == Self.expected.values.filter { !$0 }.count)
        await fixture.close()
        try await fixture.daemon.stop()
    }

    @Test func theCharacterLimitCutsTheContent() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.daemon.cleanUp() }
        try await fixture.apply(Self.policy(level: "any", maxChars: 10))
        let copied = try await fixture.source.pasteboard.copy("0123456789ABCDEF")
        #expect(copied.truncatedTo == 10)
        let pasted = try await fixture.target.pasteboard.paste()
        #expect(pasted.content == "0123456789")
        #expect(pasted.truncatedTo == nil, "already cut on copy")
        let large = String(repeating: "x", count: 49 * 1024)
        await #expect(throws: CordonError.contentTooLarge(limit: 48 * 1024)) {
            _ = try await fixture.source.pasteboard.copy(large)
        }
        // From the CLI, as a user would see it.
        let cli = try await runCommand(
            Binaries.cordon,
            [
                "--socket", fixture.daemon.socketPath, "pasteboard", "copy", "--app", "com.example.cli",
                "abcdefghijklmnop",
            ])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.contains("cut to 10 characters"))
        let paste = try await runCommand(
            Binaries.cordon, ["--socket", fixture.daemon.socketPath, "pasteboard", "paste", "--app", "com.example.cli"])
        #expect(paste.stdout == "abcdefghij\n")
        await fixture.close()
        try await fixture.daemon.stop()
    }

    @Test func clearedOnLockWhenThePolicySaysAndAlwaysOnRevocation() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.daemon.cleanUp() }
        try await fixture.apply(Self.policy(level: "any"))
        _ = try await fixture.source.pasteboard.copy("kept over a lock")
        try await fixture.client.lock()
        // Nothing is pasted while the container is locked; it is kept for after the unlock.
        await #expect(throws: CordonError.locked) { _ = try await fixture.target.pasteboard.paste() }
        try await fixture.target.unlockWithinGrace()
        #expect(try await fixture.target.pasteboard.paste().content == "kept over a lock")

        try await fixture.apply(Self.policy(level: "any", clearOnLock: true))
        _ = try await fixture.source.pasteboard.copy("gone on lock")
        try await fixture.client.lock()
        try await fixture.target.unlockWithinGrace()
        await #expect(throws: CordonError.pasteboardEmpty) { _ = try await fixture.target.pasteboard.paste() }

        try await fixture.apply(Self.policy(level: "any"))
        _ = try await fixture.source.pasteboard.copy("gone on logout")
        try await fixture.client.logout()
        await #expect(throws: CordonError.locked) { _ = try await fixture.target.pasteboard.paste() }
        try await fixture.client.unlock(passcode: "2468")
        await #expect(throws: CordonError.pasteboardEmpty) { _ = try await fixture.target.pasteboard.paste() }
        let cli = try await runCommand(
            Binaries.cordon, ["--socket", fixture.daemon.socketPath, "pasteboard", "paste", "--app", "com.example.cli"])
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("the managed pasteboard is empty"))
        await fixture.close()
        try await fixture.daemon.stop()
    }
}
