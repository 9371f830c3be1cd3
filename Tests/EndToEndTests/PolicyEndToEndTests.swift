import CordonKit
import CordonProtocol
import CordonTrust
import Foundation
import Testing

/// Policies pushed by an admin, against the real daemon: hot reload, last good kept, signatures,
/// executable binding, decisions over the socket.
@Suite struct PolicyEndToEndTests {
    static let managedPasteboard = #"""
        {"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed", "maxChars": 10},
         "lock": {"idleTimeoutSeconds": 120}}
        """#

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // Atomic, as `cordon policy push` does: the agent never sees half a file.
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func paste(_ client: CordonClient, from source: String) async throws -> CordonDecision {
        try await client.check(action: .pasteboardPaste, target: source, context: ["length": "50"])
    }

    @Test func hotReloadKeepsTheLastGoodPolicy() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        let observer = try await daemon.client()
        var events = try await observer.events().makeAsyncIterator()
        #expect(try await events.next()?.kind == .state)
        #expect(try await paste(client, from: "com.example.other").allowed, "the default allows any paste")

        let file = daemon.adminPolicyDirectory + "/10-corp.json"
        try write(Self.managedPasteboard, to: file)
        let changed = try #require(try await events.next())
        #expect(changed.kind == .policyDidChange)
        #expect(changed.policyVersion?.isEmpty == false)
        let denied = try await paste(client, from: "com.example.other")
        #expect(!denied.allowed)
        #expect(denied.rules == ["\(file)#/pasteboard/copyOut"])
        #expect(try await client.status().idleTimeoutSeconds == 120)

        // A broken edit is rejected and the good version stays in force.
        try write(#"{"schema": "cordon.policy.v1", "pasteboard": {"copyOutt": "any"}}"#, to: file)
        try await eventually("the rejection is reported") {
            try await client.policyStatus().sources.contains {
                $0.path == file && $0.status.rawValue.hasPrefix("rejected")
            }
        }
        let status = try await client.policyStatus()
        let rejected = try #require(status.sources.first { $0.path == file })
        #expect(rejected.problems.contains { $0.contains("did you mean \"copyOut\"") && $0.contains(":1:") })
        #expect(!(try await paste(client, from: "com.example.other").allowed), "the last good policy holds")
        #expect(status.version == changed.policyVersion)

        // A good edit applies, with a new event.
        try write(#"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any"}}"#, to: file)
        let next = try #require(try await events.next())
        #expect(next.kind == .policyDidChange && next.policyVersion != changed.policyVersion)
        #expect(try await paste(client, from: "com.example.other").allowed)

        let audit = try await client.audit(since: nil, appId: nil, limit: 100)
        #expect(audit.contains { $0.outcome == "deny" && $0.action == "pasteboard.paste" })
        #expect(audit.contains { $0.category == "policy" && $0.outcome == "rejected" })
        try await daemon.stop()
    }

    @Test func followAuditSendsHistoryThenLiveRecords() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        try write(Self.managedPasteboard, to: daemon.adminPolicyDirectory + "/10-corp.json")
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        #expect(!(try await paste(client, from: "com.example.early").allowed))
        try await eventually("the first deny is audited") {
            try await client.audit(since: nil, appId: nil, limit: 100).contains { $0.outcome == "deny" }
        }
        var follow = try await client.followAudit().makeAsyncIterator()
        var seen: [AuditEntry] = []
        while !seen.contains(where: { $0.outcome == "deny" }), let entry = try await follow.next() {
            seen.append(entry)
        }
        #expect(!(try await paste(client, from: "com.example.late").allowed))
        var live: AuditEntry?
        while live == nil, let entry = try await follow.next() {
            if entry.outcome == "deny" { live = entry }
        }
        let first = try #require(seen.last)
        let second = try #require(live)
        #expect(second.id > first.id, "live records come after the history, in order")
        try await daemon.stop()
    }

    @Test func userPolicyCanOnlyTighten() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        try write(
            #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "blocked"}}"#,
            to: daemon.adminPolicyDirectory + "/a.json")
        try write(
            #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "any"}}"#,
            to: daemon.userPolicyDirectory + "/u.json")
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        #expect(!(try await paste(client, from: "com.example.other").allowed), "a user file cannot loosen")
        try await daemon.stop()
    }

    @Test func signedAdminPolicies() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        let trusted = PolicySigning.generateKeyPair()
        let stranger = PolicySigning.generateKeyPair()
        try write(trusted.publicKey, to: daemon.trustDirectory + "/admin.pub")
        let file = daemon.adminPolicyDirectory + "/10-signed.json"
        let body = Data(Self.managedPasteboard.utf8)

        func signature(_ body: Data, _ key: String) throws -> String {
            try PolicySigning.sign(
                body, name: "10-signed.json", serial: 1, expires: Date().timeIntervalSince1970 + 3600, privateKey: key
            ).text
        }
        func outcome() async throws -> String {
            let status = try await client.reloadPolicy()
            let source = try #require(status.sources.first { $0.path == file })
            return source.status == .applied ? "applied:\(source.signedBy ?? "")" : source.problems.joined()
        }

        try write(Self.managedPasteboard, to: file)
        #expect(try await outcome().contains("no signature"), "missing signature")
        try write(try signature(body, stranger.privateKey), to: file + ".sig")
        #expect(try await outcome().contains("not trusted"), "wrong key")
        try write(try signature(body, trusted.privateKey), to: file + ".sig")
        #expect(try await outcome() == "applied:\(trusted.keyId)", "good signature")
        #expect(!(try await paste(client, from: "com.example.other").allowed))
        try write(Self.managedPasteboard.replacingOccurrences(of: "managed", with: "any"), to: file)
        #expect(try await outcome().contains("does not match"), "tampered file")
        #expect(!(try await paste(client, from: "com.example.other").allowed), "the last good signed policy holds")
        try await daemon.stop()
    }

    @Test func executableMismatchIsUnmanagedWithoutKey() async throws {
        let daemon = try await DaemonProcess.started(trustUnboundApps: false)
        defer { daemon.cleanUp() }
        try write(
            #"""
            {"schema": "cordon.policy.v1", "apps": {"managed": [
              {"id": "com.example.bound", "executables": ["/usr/bin/not-this-test"]}]}}
            """#, to: daemon.adminPolicyDirectory + "/apps.json")
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.bound", socketPath: daemon.socketPath)
        #expect(!app.managed)
        await #expect(throws: CordonError.notManaged(appId: "com.example.bound")) { _ = try await app.key() }
        let other = try await CordonApp.connect(appId: "com.example.free", socketPath: daemon.socketPath)
        #expect(!other.managed, "once apps are bound, an unbound id gets apps.unknown (default: unmanaged)")
        let audit = try await client.audit(since: nil, appId: "com.example.bound", limit: 10)
        #expect(audit.contains { $0.action == "app.register" && $0.outcome == "unmanaged" })
        await app.close()
        await other.close()
        try await daemon.stop()
    }
}

/// The built-in default is a fallback: admin files may loosen it, user files only tighten.
@Suite struct PolicyFallbackTests {
    @Test func adminFileMayLoosenTheDefault() async throws {
        let daemon = try await DaemonProcess.started(arguments: ["--idle-timeout", "300"])
        defer { daemon.cleanUp() }
        try FileManager.default.createDirectory(atPath: daemon.adminPolicyDirectory, withIntermediateDirectories: true)
        try
            #"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 900}, "passcode": {"onMaxAttempts": "lockout"}}"#
            .write(toFile: daemon.adminPolicyDirectory + "/loose.json", atomically: true, encoding: .utf8)
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        #expect(try await client.status().idleTimeoutSeconds == 900)
        let settings = try await client.effectivePolicy().settings
        let onMax = try #require(settings.first { $0.path == "/passcode/onMaxAttempts" })
        #expect(onMax.value == "\"lockout\"")
        #expect(onMax.rules == [daemon.adminPolicyDirectory + "/loose.json#/passcode/onMaxAttempts"])

        // A user file cannot loosen the admin's value further, only tighten it.
        try FileManager.default.createDirectory(atPath: daemon.userPolicyDirectory, withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 3600}}"#
            .write(toFile: daemon.userPolicyDirectory + "/mine.json", atomically: true, encoding: .utf8)
        _ = try await client.reloadPolicy()
        #expect(try await client.status().idleTimeoutSeconds == 900)
        try #"{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 60}}"#
            .write(toFile: daemon.userPolicyDirectory + "/mine.json", atomically: true, encoding: .utf8)
        _ = try await client.reloadPolicy()
        #expect(try await client.status().idleTimeoutSeconds == 60)
        try await daemon.stop()
    }
}

/// The agent enforces what the policy says about passcodes, conditions and data access.
@Suite struct PolicyEnforcementTests {
    func admin(_ daemon: DaemonProcess, _ json: String) async throws -> CordonClient {
        try FileManager.default.createDirectory(atPath: daemon.adminPolicyDirectory, withIntermediateDirectories: true)
        try json.write(toFile: daemon.adminPolicyDirectory + "/p.json", atomically: true, encoding: .utf8)
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        return client
    }

    @Test func passcodeRulesApplyToInitializeAndChange() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await admin(
            daemon,
            #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 8, "kind": "alphanumeric", "allowSimple": false}}"#
        )
        await #expect(throws: CordonError.self) { try await client.initialize(passcode: "1234") }
        await #expect(throws: CordonError.self) { try await client.initialize(passcode: "abcdefgh") }
        try await client.initialize(passcode: "river7stone")
        await #expect(throws: CordonError.self) {
            try await client.changePasscode(old: "river7stone", new: "12345678")
        }
        try await client.changePasscode(old: "river7stone", new: "maple42leaf")
        try await client.unlock(passcode: "maple42leaf")
        try await daemon.stop()
    }

    @Test func preloadInjectedBlocksRegistration() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await admin(
            daemon, #"{"schema": "cordon.policy.v1", "conditions": {"preloadInjected": "block"}}"#)
        let preload = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"].first {
            FileManager.default.fileExists(atPath: $0)
        }
        let library = try #require(preload)
        let result = try await runCommand(
            Binaries.notes, ["--dir", daemon.root.path, "--socket", daemon.socketPath],
            environment: ["LD_PRELOAD": library])
        #expect(result.status == 3, "the injected client is refused: \(result.stdout)")
        #expect(result.stdout.contains("Refused") || result.stdout.contains("refused"))
        let audit = try await client.audit(since: nil, appId: "com.example.notes", limit: 10)
        #expect(audit.contains { $0.outcome == "refused" && $0.reason.contains("preloadInjected") })
        try await daemon.stop()
    }

    @Test func dataAccessWhenUnlockedWithholdsTheKeyWhileLocked() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await admin(
            daemon, #"{"schema": "cordon.policy.v1", "storage": {"dataAccess": "whenUnlocked"}}"#)
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.data", socketPath: daemon.socketPath)
        _ = try await app.key()
        try await client.lock()
        #expect(try await client.status().state == .lockedKeyHeld)
        await #expect(throws: CordonError.keyUnavailable(state: "lockedKeyHeld")) { _ = try await app.key() }
        try await app.unlockWithinGrace()
        _ = try await app.key()
        await app.close()
        try await daemon.stop()
    }

    @Test func overrideGivesOneAppItsOwnAckDeadline() async throws {
        let daemon = try await DaemonProcess.started(arguments: ["--ack-deadline-ms", "60000"])
        defer { daemon.cleanUp() }
        let client = try await admin(
            daemon,
            #"{"schema": "cordon.policy.v1", "overrides": [{"apps": ["com.example.fast"], "lock": {"ackDeadlineMs": 100}}]}"#
        )
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let fast = try await CordonApp.connect(appId: "com.example.fast", socketPath: daemon.socketPath)
        let slow = try await CordonApp.connect(appId: "com.example.slow", socketPath: daemon.socketPath)
        try await client.logout()
        try await eventually("the overridden app is overdue") {
            try await client.apps().first { $0.appId == "com.example.fast" }?.compliance == .overdue
        }
        #expect(try await client.apps().first { $0.appId == "com.example.slow" }?.compliance == .pending)
        await fast.close()
        await slow.close()
        try await daemon.stop()
    }
}
