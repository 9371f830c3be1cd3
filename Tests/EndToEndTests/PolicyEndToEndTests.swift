import CordonProtocol
import CordonTrust
import Foundation
import Testing

/// The decision `io.cordon.App.Check` gives an unregistered client run as the user (as the CLI
/// is) on a paste of 50 characters from `source`.
private func paste(_ agent: UserAgent, from source: String) async throws -> CordonDecision {
    try await agent.varlink(
        "io.cordon.App.Check",
        ["action": PolicyAction.pasteboardPaste.rawValue, "target": source, "context": ["length": "50"]], "decision",
        as: CordonDecision.self)
}

/// The agent's status, as `io.cordon.Agent.GetStatus` gives it to a program run as the user.

/// The policy's status after a reload asked for by a program run as the user (as `cordon policy
/// reload` does).
@discardableResult
private func reload(_ agent: UserAgent) async throws -> PolicyStatus {
    try await agent.varlink("io.cordon.Policy.Reload", [:], "status", as: PolicyStatus.self)
}

/// Writes `text` to `path` as root (an admin file) or, under the user's directory, as the user would.
private func write(_ text: String, to path: String, in agent: UserAgent) async throws {
    let directory = (path as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    // Atomic, as `cordon policy push` does: the agent never sees half a file.
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    if path.hasPrefix(agent.home.path + "/") { try await agent.give(agent.home.appending("config")) }
}

/// Policies pushed by an admin, against the real daemon: hot reload, last good kept, signatures,
/// executable binding, decisions over the socket. cordond, the CLI and the apps run as an
/// ordinary user outside test mode (``UserAgent``); the admin files are root's.
@Suite struct PolicyEndToEndTests {
    static let noPolicy = #"{"schema": "cordon.policy.v1"}"#
    static let managedPasteboard = #"""
        {"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed", "maxChars": 10},
         "lock": {"idleTimeoutSeconds": 120}}
        """#

    /// `agent`'s audit records (the newest 100), as `io.cordon.Audit.Query` gives them.
    static func audit(_ agent: UserAgent, appId: String? = nil, limit: Int = 100) async throws -> [AuditEntry] {
        var parameters: [String: Any] = ["limit": limit]
        if let appId { parameters["appId"] = appId }
        return try await agent.varlink("io.cordon.Audit.Query", parameters, "records", as: [AuditEntry].self)
    }

    @Test func hotReloadKeepsTheLastGoodPolicy() async throws {
        let agent = try await UserAgent(policy: Self.noPolicy, initialize: false)
        defer { agent.cleanUp() }
        let (observer, output) = try agent.cliInBackground(["events", "--follow", "--json"])
        defer {
            kill(observer.processIdentifier, SIGKILL)
            observer.waitUntilExit()
        }
        /// The `index`th event the observer printed, once it has.
        func event(_ index: Int) async throws -> [String: Any] {
            try await eventually("the observer prints event \(index)") { output.snapshot.count > index }
            let line = output.snapshot[index]
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(try await event(0)["kind"] as? String == EventKind.state.rawValue)
        #expect(try await paste(agent, from: "com.example.other").allowed, "the default allows any paste")

        let file = agent.system.appending("admin/10-corp.json")
        try await write(Self.managedPasteboard, to: file, in: agent)
        let changed = try await event(1)
        #expect(changed["kind"] as? String == EventKind.policyDidChange.rawValue)
        let version = try #require(changed["policyVersion"] as? String)
        #expect(!version.isEmpty)
        let denied = try await paste(agent, from: "com.example.other")
        #expect(!denied.allowed)
        #expect(denied.rules == ["\(file)#/pasteboard/copyOut"])
        #expect(try await agent.agentStatus().idleTimeoutSeconds == 120)

        // A broken edit is rejected and the good version stays in force.
        try await write(#"{"schema": "cordon.policy.v1", "pasteboard": {"copyOutt": "any"}}"#, to: file, in: agent)
        func policyStatus() async throws -> PolicyStatus {
            try await agent.varlink("io.cordon.Policy.GetStatus", [:], "status", as: PolicyStatus.self)
        }
        try await eventually("the rejection is reported") {
            try await policyStatus().sources.contains { $0.path == file && $0.status.rawValue.hasPrefix("rejected") }
        }
        let status = try await policyStatus()
        let rejected = try #require(status.sources.first { $0.path == file })
        #expect(rejected.problems.contains { $0.contains("did you mean \"copyOut\"") && $0.contains(":1:") })
        #expect(!(try await paste(agent, from: "com.example.other").allowed), "the last good policy holds")
        #expect(status.version == version)

        // A good edit applies, with a new event.
        try await write(#"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any"}}"#, to: file, in: agent)
        let next = try await event(2)
        #expect(next["kind"] as? String == EventKind.policyDidChange.rawValue)
        #expect(next["policyVersion"] as? String != version)
        #expect(try await paste(agent, from: "com.example.other").allowed)

        let audit = try await Self.audit(agent)
        #expect(audit.contains { $0.outcome == "deny" && $0.action == "pasteboard.paste" })
        #expect(audit.contains { $0.category == "policy" && $0.outcome == "rejected" })
        agent.terminate()
    }

    @Test func followAuditSendsHistoryThenLiveRecords() async throws {
        let agent = try await UserAgent(policy: Self.managedPasteboard, initialize: false)
        defer { agent.cleanUp() }
        #expect(!(try await paste(agent, from: "com.example.early").allowed))
        try await eventually("the first deny is audited") {
            try await Self.audit(agent).contains { $0.outcome == "deny" }
        }
        let (follower, output) = try agent.cliInBackground(["audit", "--follow", "--json"])
        defer {
            kill(follower.processIdentifier, SIGKILL)
            follower.waitUntilExit()
        }
        func records() -> [AuditEntry] {
            output.snapshot.compactMap { try? JSONDecoder().decode(AuditEntry.self, from: Data($0.utf8)) }
        }
        try await eventually("the history's deny is followed") { records().contains { $0.outcome == "deny" } }
        let seen = records()
        let history = try #require(seen.firstIndex { $0.outcome == "deny" })
        #expect(!(try await paste(agent, from: "com.example.late").allowed))
        try await eventually("a live deny is followed") {
            records().dropFirst(history + 1).contains { $0.outcome == "deny" }
        }
        let first = seen[history]
        let second = try #require(records().dropFirst(history + 1).first { $0.outcome == "deny" })
        #expect(second.id > first.id, "live records come after the history, in order")
        agent.terminate()
    }

    @Test func userPolicyCanOnlyTighten() async throws {
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "blocked"}}"#, initialize: false)
        defer { agent.cleanUp() }
        try await write(
            #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any"}}"#,
            to: agent.home.appending("config/policy.d/u.json"), in: agent)
        try await reload(agent)
        #expect(!(try await paste(agent, from: "com.example.other").allowed), "a user file cannot loosen")
        agent.terminate()
    }

    @Test func signedAdminPolicies() async throws {
        let agent = try await UserAgent(policy: Self.noPolicy, initialize: false)
        defer { agent.cleanUp() }
        let trusted = PolicySigning.generateKeyPair()
        let stranger = PolicySigning.generateKeyPair()
        try await write(trusted.publicKey, to: agent.system.appending("trust/admin.pub"), in: agent)
        let file = agent.system.appending("admin/10-signed.json")
        let body = Data(Self.managedPasteboard.utf8)

        func signature(_ body: Data, _ key: String) throws -> String {
            try PolicySigning.sign(
                body, name: "10-signed.json", serial: 1, expires: Date().timeIntervalSince1970 + 3600, privateKey: key
            ).text
        }
        func outcome() async throws -> String {
            let status = try await reload(agent)
            let source = try #require(status.sources.first { $0.path == file })
            return source.status == .applied ? "applied:\(source.signedBy ?? "")" : source.problems.joined()
        }

        try await write(Self.managedPasteboard, to: file, in: agent)
        #expect(try await outcome().contains("no signature"), "missing signature")
        try await write(try signature(body, stranger.privateKey), to: file + ".sig", in: agent)
        #expect(try await outcome().contains("not trusted"), "wrong key")
        try await write(try signature(body, trusted.privateKey), to: file + ".sig", in: agent)
        #expect(try await outcome() == "applied:\(trusted.keyId)", "good signature")
        #expect(!(try await paste(agent, from: "com.example.other").allowed))
        try await write(Self.managedPasteboard.replacingOccurrences(of: "managed", with: "any"), to: file, in: agent)
        #expect(try await outcome().contains("does not match"), "tampered file")
        #expect(!(try await paste(agent, from: "com.example.other").allowed), "the last good signed policy holds")
        agent.terminate()
    }

    @Test func executableMismatchIsUnmanagedWithoutKey() async throws {
        let agent = try await UserAgent(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.bound", "executables": ["/usr/bin/not-this-test"]}]}}
                """#)
        defer { agent.cleanUp() }
        let apps = try await agent.attack(
            """
            s = connect(sys.argv[1])
            bound = call(s, "io.cordon.App.Register", {"appId": "com.example.bound"})
            # The second app registers (from a connection of its own) before the process is hardened.
            other = call(connect(sys.argv[1]), "io.cordon.App.Register", {"appId": "com.example.free"})
            harden()
            key = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"bound": bound.get("parameters", {}).get("managed"), "key": error(key),
                              "keyFor": key.get("parameters", {}).get("appId"),
                              "other": other.get("parameters", {}).get("managed"), "otherReply": other}))
            """)
        #expect(apps["bound"] as? Bool == false, "\(apps)")
        #expect(
            apps["key"] as? String == "io.cordon.App.NotManaged" && apps["keyFor"] as? String == "com.example.bound")
        #expect(
            apps["other"] as? Bool == false,
            "once apps are bound, an unbound id gets apps.unknown (default: unmanaged): \(apps)"
        )
        let audit = try await Self.audit(agent, appId: "com.example.bound", limit: 10)
        #expect(audit.contains { $0.action == "app.register" && $0.outcome == "unmanaged" })
        agent.terminate()
    }
}

/// The built-in default is a fallback: admin files may loosen it, user files only tighten.
/// cordond and the CLI run as an ordinary user outside test mode (``UserAgent``), with the
/// built-in idle timeout (300 s, what the `--idle-timeout 300` of test mode used to set).
@Suite struct PolicyFallbackTests {
    @Test func adminFileMayLoosenTheDefault() async throws {
        let loose =
            #"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 900}, "passcode": {"onMaxAttempts": "lockout"}}"#
        let agent = try await UserAgent(policy: loose, initialize: false)
        defer { agent.cleanUp() }
        let file = agent.system.appending("admin/10-apps.json")
        try await reload(agent)
        #expect(try await agent.agentStatus().idleTimeoutSeconds == 900)
        let settings = try await agent.varlink(
            "io.cordon.Policy.GetEffective", [:], nil, as: EffectivePolicyReply.self
        ).settings
        let onMax = try #require(settings.first { $0.path == "/passcode/onMaxAttempts" })
        #expect(onMax.value == "\"lockout\"")
        #expect(onMax.rules == [file + "#/passcode/onMaxAttempts"])

        // A user file cannot loosen the admin's value further, only tighten it.
        let mine = agent.home.appending("config/policy.d/mine.json")
        try await write(#"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 3600}}"#, to: mine, in: agent)
        try await reload(agent)
        #expect(try await agent.agentStatus().idleTimeoutSeconds == 900)
        try await write(#"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 60}}"#, to: mine, in: agent)
        try await reload(agent)
        #expect(try await agent.agentStatus().idleTimeoutSeconds == 60)
        agent.terminate()
    }
}

/// The agent enforces what the policy says about passcodes, conditions and data access. cordond,
/// the CLI and the apps run as an ordinary user outside test mode (``UserAgent``).
@Suite struct PolicyEnforcementTests {
    @Test func passcodeRulesApplyToInitializeAndChange() async throws {
        let agent = try await UserAgent(
            policy:
                #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 8, "kind": "alphanumeric", "allowSimple": false}}"#,
            initialize: false)
        defer { agent.cleanUp() }
        func initialize(_ passcode: String) async throws -> Int32 {
            try await agent.cli(["init", "--passcode-stdin"], input: passcode + "\n").status
        }
        #expect(try await initialize("1234") != 0)
        #expect(try await initialize("abcdefgh") != 0)
        #expect(try await initialize("river7stone") == 0)
        #expect(try await agent.cli(["passwd", "--passcode-stdin"], input: "river7stone\n12345678\n").status != 0)
        #expect(try await agent.cli(["passwd", "--passcode-stdin"], input: "river7stone\nmaple42leaf\n").status == 0)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: "maple42leaf\n").status == 0)
        agent.terminate()
    }

    @Test func preloadInjectedBlocksRegistration() async throws {
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1", "conditions": {"preloadInjected": "block"}}"#, initialize: false)
        defer { agent.cleanUp() }
        let preload = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"].first {
            FileManager.default.fileExists(atPath: $0)
        }
        let library = try #require(preload)
        let result = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [
                Binaries.notes.path, "--dir", agent.home.appending("notes"), "--socket", agent.socketPath,
            ], environment: agent.userEnvironment.merging(["LD_PRELOAD": library]) { $1 })
        #expect(result.status == 3, "the injected client is refused: \(result.stdout)")
        #expect(result.stdout.contains("Refused") || result.stdout.contains("refused"))
        let audit = try await PolicyEndToEndTests.audit(agent, appId: "com.example.notes", limit: 10)
        #expect(audit.contains { $0.outcome == "refused" && $0.reason.contains("preloadInjected") })
        agent.terminate()
    }

    @Test func dataAccessWhenUnlockedWithholdsTheKeyWhileLocked() async throws {
        let agent = try await UserAgent(
            policy:
                #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "storage": {"dataAccess": "whenUnlocked"}}"#
        )
        defer { agent.cleanUp() }
        let app = try await agent.startApp("com.example.data")
        defer { app.cleanUp() }
        #expect(try await app.call("io.cordon.App.GetKey")["error"] == nil)
        #expect(try await agent.cli(["lock"]).status == 0)
        #expect(try await agent.agentStatus().state == .lockedKeyHeld)
        let withheld = try await app.call("io.cordon.App.GetKey")
        #expect(withheld["error"] as? String == "io.cordon.App.KeyUnavailable", "\(withheld)")
        #expect((withheld["parameters"] as? [String: Any])?["state"] as? String == "lockedKeyHeld", "\(withheld)")
        // The app's own unlock within the re-authentication grace (CordonApp.unlockWithinGrace).
        let unlocked = try await app.call("io.cordon.Agent.Unlock")
        #expect(unlocked["error"] == nil, "\(unlocked)")
        #expect(try await app.call("io.cordon.App.GetKey")["error"] == nil)
        agent.terminate()
    }

    @Test func overrideGivesOneAppItsOwnAckDeadline() async throws {
        // The deadline of every other app (once the `--ack-deadline-ms` flag) is the admin policy's.
        let agent = try await UserAgent(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "lock": {"ackDeadlineMs": 60000},
                 "overrides": [{"apps": ["com.example.fast"], "lock": {"ackDeadlineMs": 100}}]}
                """#)
        defer { agent.cleanUp() }
        let fast = try await agent.startApp("com.example.fast")
        defer { fast.cleanUp() }
        let slow = try await agent.startApp("com.example.slow")
        defer { slow.cleanUp() }
        #expect(try await agent.cli(["logout"]).status == 0)
        try await eventually("the overridden app is overdue") {
            try await agent.apps().first { $0.appId == "com.example.fast" }?.compliance == .overdue
        }
        #expect(try await agent.apps().first { $0.appId == "com.example.slow" }?.compliance == .pending)
        agent.terminate()
    }
}
