import CordonKit
import CordonProtocol
import CordonStore
import Foundation
import Testing

/// `kill -9` of the agent in the middle of work: passcode checks, policy reloads, audit writes.
/// After each, nothing the agent acknowledged is lost, the database is sound, the attempt
/// counter holds and the restarted agent starts locked without its key.
@Suite struct FaultTests {
    /// Every `WrongPasscode` a client received was counted on disk first: a storm of wrong
    /// guesses from several clients, killed mid-storm, leaves at least that many failures
    /// recorded (and at most one more per client: the checks in flight).
    @Test func killDuringAnUnlockStormKeepsEveryAnsweredFailure() async throws {
        let daemon = try await DaemonProcess.started(arguments: FaultFixtures.manyAttempts)
        defer { daemon.cleanUp() }
        let setup = try await daemon.client()
        try await setup.initialize(passcode: "correct-horse")
        try await setup.logout()
        await setup.close()

        let clients = 8
        let hammer = try CallHammer(
            clients: clients, socket: daemon.socketPath,
            request: FaultFixtures.wrongUnlock
        ) { varlinkErrorName($0) == "io.cordon.Agent.WrongPasscode" }
        try await eventually(timeout: 300, "wrong passcodes are answered") { hammer.acknowledged >= 300 }
        try await daemon.stop(signal: SIGKILL)
        let answered = await hammer.finish().reduce(0, +)

        let restarted = try await DaemonProcess.started(root: daemon.root, arguments: FaultFixtures.manyAttempts)
        defer { restarted.cleanUp() }
        let failures = try await restarted.client().status().failedAttempts
        print("unlock storm: \(answered) WrongPasscode replies received, \(failures) failures on disk")
        #expect(failures >= answered, "a WrongPasscode the client saw was not counted")
        #expect(failures <= answered + clients, "more failures than checks")
        try await FaultFixtures.expectSoundRestart(restarted, failedAttempts: failures)
    }

    /// Many policy files rewritten while clients call `Reload` as fast as it answers, then a
    /// kill: the restarted agent applies the files as they are on disk, and every policy version
    /// a `Reload` reply reported was audited as applied.
    @Test func killDuringPolicyReloadsLosesNothing() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        try await FaultFixtures.unlockedWithTwoFailures(daemon)
        let initial = try await daemon.client().policyStatus().version

        let writer = PolicyStormWriter(directory: daemon.adminPolicyDirectory)
        writer.start()
        defer { writer.stop() }
        let versions = Collected<String>()
        let hammer = try CallHammer(clients: 4, socket: daemon.socketPath, request: FaultFixtures.reload) {
            guard varlinkErrorName($0) == nil, let version = PolicyStormWriter.version(inReloadReply: $0) else {
                return false
            }
            versions.insert(version)
            return true
        }
        try await eventually(timeout: 300, "reloads are answered while files change") {
            hammer.acknowledged >= 200 && writer.rounds >= 50
        }
        try await daemon.stop(signal: SIGKILL)
        writer.stop()
        _ = await hammer.finish()

        let restarted = try await DaemonProcess.started(root: daemon.root)
        defer { restarted.cleanUp() }
        let client = try await restarted.client()
        defer { Task { await client.close() } }
        let status = try await client.policyStatus()
        let stormFile = try #require(status.sources.first { $0.path.hasSuffix(PolicyStormWriter.mainFile) })
        #expect(stormFile.isApplied, "the last complete file is applied: \(stormFile.problems)")
        let copy = try await client.check(action: .pasteboardCopy, context: ["length": "10000000"])
        #expect(copy.truncateTo == writer.lastMaxChars, "the file on disk is the policy in force")

        let database = try CordonDatabase(path: restarted.databasePath, readOnly: true)
        let applied = Set(
            try database.queryAudit(AuditQuery(limit: 1_000_000)).filter { $0.action == "policy.apply" }.map(\.reason))
        let acknowledged = versions.all.subtracting([initial])
        let missing = acknowledged.filter { !applied.contains("policy version \($0)") }
        print(
            "policy storm: \(writer.rounds) rounds, \(versions.all.count) versions acknowledged, \(missing.count) unaudited"
        )
        // Reload answers once the policy.apply records are stored.
        #expect(missing.isEmpty, "versions reported by Reload but never audited: \(missing.sorted())")
        try await FaultFixtures.expectSoundRestart(restarted, failedAttempts: 2)
    }

    /// A burst of denied checks (each audited), then a kill: the record of every denial a client
    /// was answered is on disk, and so is every record an audit follower received.
    @Test func killDuringAuditWritesLosesNoAcknowledgedRecord() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        try FaultFixtures.write(FaultFixtures.denyPastes, to: daemon.adminPolicyDirectory + "/10-deny.json")
        try await FaultFixtures.unlockedWithTwoFailures(daemon)
        let setup = try await daemon.client()
        _ = try await setup.reloadPolicy()
        #expect(!(try await setup.check(action: .pasteboardPaste, target: "com.example.other").allowed))

        let followed = Collected<Int>()
        let stream = try await setup.followAudit()
        await setup.close()
        let follower = Task {
            for try await entry in stream where entry.id > 0 { followed.insert(entry.id) }
        }
        defer { follower.cancel() }
        let hammer = try CallHammer(
            clients: 16, socket: daemon.socketPath,
            request: FaultFixtures.deniedPaste
        ) { FaultFixtures.isDecision($0, allowed: false) }
        try await eventually(timeout: 300, "denials are answered and followed") {
            hammer.acknowledged >= 3000 && followed.all.count >= 100
        }
        try await daemon.stop(signal: SIGKILL)
        let answered = await hammer.finish().reduce(0, +)
        _ = await follower.result

        let restarted = try await DaemonProcess.started(root: daemon.root)
        defer { restarted.cleanUp() }
        let database = try CordonDatabase(path: restarted.databasePath, readOnly: true)
        let records = try database.queryAudit(AuditQuery(limit: 1_000_000))
        let stored = Set(records.map { Int($0.id) })
        let denials = records.filter { $0.action == "pasteboard.paste" && $0.outcome == "deny" }.count
        let lostFollowed = followed.all.subtracting(stored)
        print("audit burst: \(answered) denials answered, \(denials) on disk, \(followed.all.count) followed")
        #expect(lostFollowed.isEmpty, "records streamed to a follower were lost: \(lostFollowed.count)")
        // Check answers an audited decision once its record is stored (group commit).
        #expect(denials >= answered, "\(answered - denials) answered denials have no audit record")
        try await FaultFixtures.expectSoundRestart(restarted, failedAttempts: 2)
    }
}
