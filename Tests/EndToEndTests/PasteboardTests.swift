import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The managed pasteboard against the real daemon: every copyOut level for managed and unmanaged
/// sources and targets, the character limit, and clearing on lock and on revocation.
@Suite struct PasteboardTests {
    /// Who copies and who pastes.
    enum Party: String, CaseIterable {
        /// A registered app (managed: no app is bound, so every registered id is).
        case managed
        /// The unregistered CLI-like client.
        case unmanaged
    }

    /// Allowed?, by level, for (source, target).
    static let expected: [String: [String: Bool]] = [
        "blocked": ["managed>managed": false, "managed>unmanaged": false, "unmanaged>managed": false],
        "managed": ["managed>managed": true, "managed>unmanaged": false, "unmanaged>managed": false],
        "managedWithPasteIn": ["managed>managed": true, "managed>unmanaged": false, "unmanaged>managed": true],
        "any": ["managed>managed": true, "managed>unmanaged": true, "unmanaged>managed": true],
    ]

    struct Fixture {
        let daemon: DaemonProcess
        let client: CordonClient
        let source: CordonApp
        let target: CordonApp

        func pasteboard(_ party: Party, copying: Bool) -> CordonPasteboard {
            party == .unmanaged ? client.pasteboard : (copying ? source : target).pasteboard
        }

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

    @Test func everyLevelForManagedAndUnmanagedParties() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.daemon.cleanUp() }
        for (level, cases) in Self.expected.sorted(by: { $0.key < $1.key }) {
            try await fixture.apply(Self.policy(level: level))
            for (pair, allowed) in cases.sorted(by: { $0.key < $1.key }) {
                let parties = pair.split(separator: ">").compactMap { Party(rawValue: String($0)) }
                let text = "secret for \(pair) at \(level)"
                _ = try await fixture.pasteboard(parties[0], copying: true).copy(text)
                do {
                    let pasted = try await fixture.pasteboard(parties[1], copying: false).paste()
                    #expect(allowed, "\(level): \(pair) was allowed")
                    #expect(pasted.content == text)
                    #expect(pasted.source == (parties[0] == .managed ? "com.example.source" : ""))
                } catch CordonError.denied(let action, let reason, let rules) {
                    #expect(!allowed, "\(level): \(pair) was denied: \(reason)")
                    #expect(action == "pasteboard.paste")
                    #expect(rules.contains { $0.contains("pasteboard.json#/pasteboard/copyOut") }, "\(rules)")
                }
            }
            // An app may always paste what it copied itself.
            _ = try await fixture.source.pasteboard.copy("mine")
            #expect(try await fixture.source.pasteboard.paste().content == "mine", "\(level)")
        }
        #expect(!fixture.daemon.log.contains("secret for"), "pasteboard content never reaches the log")
        let denials = try await fixture.client.audit().filter {
            $0.action == "pasteboard.paste" && $0.outcome == "deny"
        }
        #expect(denials.count == Self.expected.values.flatMap(\.values).filter { !$0 }.count)
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
            Binaries.cordon, ["--socket", fixture.daemon.socketPath, "pasteboard", "copy", "abcdefghijklmnop"])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.contains("cut to 10 characters"))
        let paste = try await runCommand(
            Binaries.cordon, ["--socket", fixture.daemon.socketPath, "pasteboard", "paste"])
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
        #expect(try await fixture.target.pasteboard.paste().content == "kept over a lock")
        try await fixture.client.unlock(passcode: nil)

        try await fixture.apply(Self.policy(level: "any", clearOnLock: true))
        _ = try await fixture.source.pasteboard.copy("gone on lock")
        try await fixture.client.lock()
        await #expect(throws: CordonError.pasteboardEmpty) { _ = try await fixture.target.pasteboard.paste() }
        try await fixture.client.unlock(passcode: nil)

        try await fixture.apply(Self.policy(level: "any"))
        _ = try await fixture.source.pasteboard.copy("gone on logout")
        try await fixture.client.logout()
        await #expect(throws: CordonError.pasteboardEmpty) { _ = try await fixture.target.pasteboard.paste() }
        let cli = try await runCommand(Binaries.cordon, ["--socket", fixture.daemon.socketPath, "pasteboard", "paste"])
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("the managed pasteboard is empty"))
        await fixture.close()
        try await fixture.daemon.stop()
    }
}
