import Foundation
import Testing

/// The managed pasteboard against the real daemon: every copyOut level between two managed apps,
/// unmanaged clients kept out, the character limit, and clearing on lock and on revocation.
/// cordond, the CLI and the apps (one Python varlink program, ``UserApps``, registering the
/// source and the target) run as an ordinary user outside test mode (``UserAgent``).
@Suite struct PasteboardTests {
    /// Whether a paste from one managed app into another is allowed, by level. Only verified
    /// managed registrations reach the managed pasteboard at all (docs/THREAT-MODEL.md); the
    /// levels for unmanaged parties are what `Check` answers an app deciding about the system
    /// clipboard.
    static let expected: [String: Bool] = ["blocked": false, "managed": true, "managedWithPasteIn": true, "any": true]

    /// Unbound apps trusted: the source, the target and the CLI's app get managed registrations.
    static let trusted = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    struct Fixture {
        let agent: UserAgent
        let apps: UserApps

        /// Root writes `policy` as the admin file `pasteboard.json`; the agent reloads.
        func apply(_ policy: String) async throws {
            try await agent.applyAdminPolicy(policy, name: "pasteboard.json")
        }

        func copy(_ app: String?, _ text: String) async throws -> [String: Any] {
            try await apps.call(app, "io.cordon.Pasteboard.Copy", ["content": text])
        }

        func paste(_ app: String?) async throws -> [String: Any] {
            try await apps.call(app, "io.cordon.Pasteboard.Paste")
        }

        /// The target's `RequestUnlock`-free unlock within the grace (CordonKit's `unlockWithinGrace`).
        func unlockWithinGrace(_ app: String) async throws {
            let reply = try await apps.call(app, "io.cordon.Agent.Unlock")
            try #require(varlinkError(reply) == nil, "\(reply)")
        }

        func cleanUp() {
            apps.stop()
            agent.cleanUp()
        }
    }

    static func fixture() async throws -> Fixture {
        let agent = try await UserAgent(policy: trusted)
        do {
            let apps = try agent.startApps()
            try await apps.register("source", appId: "com.example.source")
            try await apps.register("target", appId: "com.example.target")
            return Fixture(agent: agent, apps: apps)
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    static func policy(level: String, maxChars: Int = 1000, clearOnLock: Bool = false) -> String {
        #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "\#(level)", "maxChars": \#(maxChars), "#
            + #""clearOnLock": \#(clearOnLock)}}"#
    }

    @Test func everyLevelBetweenManagedAppsAndUnmanagedClientsKeptOut() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.cleanUp() }
        for (level, allowed) in Self.expected.sorted(by: { $0.key < $1.key }) {
            try await fixture.apply(Self.policy(level: level))
            let text = "secret at \(level)"
            #expect(varlinkError(try await fixture.copy("source", text)) == nil)
            let pasted = try await fixture.paste("target")
            if let error = varlinkError(pasted) {
                let parameters = varlinkParameters(pasted)
                #expect(!allowed, "\(level): the paste was denied: \(pasted)")
                #expect(error == "io.cordon.App.Denied", "\(pasted)")
                #expect(parameters["action"] as? String == "pasteboard.paste")
                let rules = parameters["rules"] as? [String] ?? []
                #expect(rules.contains { $0.contains("pasteboard.json#/pasteboard/copyOut") }, "\(rules)")
            } else {
                #expect(allowed, "\(level): the paste was allowed")
                #expect(varlinkParameters(pasted)["content"] as? String == text)
                #expect(varlinkParameters(pasted)["source"] as? String == "com.example.source")
            }
            // A client that registered no app reaches neither end, whatever the level.
            #expect(varlinkError(try await fixture.paste(nil)) == "io.cordon.App.NotRegistered")
            #expect(varlinkError(try await fixture.copy(nil, "x")) == "io.cordon.App.NotRegistered")
            // An app may always paste what it copied itself.
            #expect(varlinkError(try await fixture.copy("source", "mine")) == nil)
            #expect(varlinkParameters(try await fixture.paste("source"))["content"] as? String == "mine", "\(level)")
        }
        #expect(!fixture.agent.log.contains("secret at"), "pasteboard content never reaches the log")
        let denials = try await fixture.agent.audit().filter {
            $0["action"] as? String == "pasteboard.paste" && $0["outcome"] as? String == "deny"
        }
        #expect(denials.count == Self.expected.values.filter { !$0 }.count)
        #expect(fixture.agent.terminate() == 0)
    }

    @Test func theCharacterLimitCutsTheContent() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.cleanUp() }
        try await fixture.apply(Self.policy(level: "any", maxChars: 10))
        let copied = try await fixture.copy("source", "0123456789ABCDEF")
        #expect(varlinkParameters(copied)["truncatedTo"] as? Int == 10, "\(copied)")
        let pasted = varlinkParameters(try await fixture.paste("target"))
        #expect(pasted["content"] as? String == "0123456789")
        #expect(pasted["truncatedTo"] == nil, "already cut on copy")
        let large = String(repeating: "x", count: 49 * 1024)
        let tooLarge = try await fixture.copy("source", large)
        #expect(varlinkError(tooLarge) == "io.cordon.Pasteboard.ContentTooLarge", "\(tooLarge)")
        #expect(varlinkParameters(tooLarge)["limit"] as? Int == 48 * 1024, "\(tooLarge)")
        // From the CLI, as a user would see it.
        let cli = try await fixture.agent.cli(["pasteboard", "copy", "--app", "com.example.cli", "abcdefghijklmnop"])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.contains("cut to 10 characters"))
        let paste = try await fixture.agent.cli(["pasteboard", "paste", "--app", "com.example.cli"])
        #expect(paste.stdout == "abcdefghij\n")
        #expect(fixture.agent.terminate() == 0)
    }

    @Test func clearedOnLockWhenThePolicySaysAndAlwaysOnRevocation() async throws {
        let fixture = try await Self.fixture()
        defer { fixture.cleanUp() }
        let agent = fixture.agent
        try await fixture.apply(Self.policy(level: "any"))
        _ = try await fixture.copy("source", "kept over a lock")
        try await agent.cliSucceeds(["lock"])
        // Nothing is pasted while the container is locked; it is kept for after the unlock.
        #expect(varlinkError(try await fixture.paste("target")) == "io.cordon.Agent.Locked")
        try await fixture.unlockWithinGrace("target")
        #expect(varlinkParameters(try await fixture.paste("target"))["content"] as? String == "kept over a lock")

        try await fixture.apply(Self.policy(level: "any", clearOnLock: true))
        _ = try await fixture.copy("source", "gone on lock")
        try await agent.cliSucceeds(["lock"])
        try await fixture.unlockWithinGrace("target")
        #expect(varlinkError(try await fixture.paste("target")) == "io.cordon.Pasteboard.Empty")

        try await fixture.apply(Self.policy(level: "any"))
        _ = try await fixture.copy("source", "gone on logout")
        try await agent.cliSucceeds(["logout"])
        #expect(varlinkError(try await fixture.paste("target")) == "io.cordon.Agent.Locked")
        try await agent.unlock()
        #expect(varlinkError(try await fixture.paste("target")) == "io.cordon.Pasteboard.Empty")
        let cli = try await agent.cli(["pasteboard", "paste", "--app", "com.example.cli"])
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("the managed pasteboard is empty"))
        #expect(agent.terminate() == 0)
    }
}
