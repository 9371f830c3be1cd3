import CordonStore
import Foundation
import Testing

/// `kill -9` of the agent in the middle of work: passcode checks, policy reloads, audit writes.
/// After each, nothing the agent acknowledged is lost, the database is sound, the attempt
/// counter holds and the restarted agent starts locked without its key. cordond runs as an
/// ordinary user (``UserAgent``); the hammering clients connect with that user's credentials.
@Suite struct FaultTests {
    /// Every `WrongPasscode` a client received was counted on disk first: a storm of wrong
    /// guesses from several clients, killed mid-storm, leaves at least that many failures
    /// recorded (and at most one more per client: the checks in flight). Hundreds of checks need
    /// the fast KDF and unbounded attempts: test mode alone takes those flags.
    @Test func killDuringAnUnlockStormKeepsEveryAnsweredFailure() async throws {
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false, arguments: FaultFixtures.manyAttempts,
            testMode: true)
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: FaultFixtures.passcode + "\n").status == 0)
        #expect(try await agent.cli(["logout"]).status == 0)

        let clients = 8
        let hammer = try CallHammer(
            clients: clients, socket: agent.socketPath,
            request: FaultFixtures.wrongUnlock
        ) { varlinkErrorName($0) == "io.cordon.Agent.WrongPasscode" }
        try await eventually(timeout: 300, "wrong passcodes are answered") { hammer.acknowledged >= 300 }
        agent.stop()
        let answered = await hammer.finish().reduce(0, +)

        try await agent.restart()
        let failures = try #require(try await agent.status()["failedAttempts"] as? Int)
        print("unlock storm: \(answered) WrongPasscode replies received, \(failures) failures on disk")
        #expect(failures >= answered, "a WrongPasscode the client saw was not counted")
        #expect(failures <= answered + clients, "more failures than checks")
        try await FaultFixtures.expectSoundRestart(agent, failedAttempts: failures)
    }

    /// Many policy files rewritten while clients call `Reload` as fast as it answers, then a
    /// kill: the restarted agent applies the files as they are on disk, and every policy version
    /// a `Reload` reply reported was audited as applied.
    @Test func killDuringPolicyReloadsLosesNothing() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
        defer { agent.cleanUp() }
        try await FaultFixtures.unlockedWithTwoFailures(agent)
        let initial = try #require(try await Self.policyStatus(agent)["version"] as? String)

        let writer = PolicyStormWriter(directory: agent.system.appending("admin"))
        writer.start()
        defer { writer.stop() }
        let versions = Collected<String>()
        let hammer = try CallHammer(clients: 4, socket: agent.socketPath, request: FaultFixtures.reload) {
            guard varlinkErrorName($0) == nil, let version = PolicyStormWriter.version(inReloadReply: $0) else {
                return false
            }
            versions.insert(version)
            return true
        }
        try await eventually(timeout: 300, "reloads are answered while files change") {
            hammer.acknowledged >= 200 && writer.rounds >= 50
        }
        agent.stop()
        writer.stop()
        _ = await hammer.finish()

        try await agent.restart()
        let status = try await Self.policyStatus(agent)
        let sources = status["sources"] as? [[String: Any]] ?? []
        let stormFile = try #require(
            sources.first { ($0["path"] as? String)?.hasSuffix(PolicyStormWriter.mainFile) == true }, "\(status)")
        #expect(stormFile["status"] as? String == "applied", "the last complete file is applied: \(stormFile)")
        let copy = try await agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.App.Check",
                         {"action": "pasteboard.copy", "context": {"length": "10000000"}})
            print(json.dumps({"truncateTo": reply.get("parameters", {}).get("decision", {}).get("truncateTo")}))
            """)
        #expect(copy["truncateTo"] as? Int == writer.lastMaxChars, "the file on disk is the policy in force")

        let database = try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true)
        let applied = Set(
            try database.queryAudit(AuditQuery(limit: 1_000_000)).filter { $0.action == "policy.apply" }.map(\.reason))
        let acknowledged = versions.all.subtracting([initial])
        let missing = acknowledged.filter { !applied.contains("policy version \($0)") }
        print(
            "policy storm: \(writer.rounds) rounds, \(versions.all.count) versions acknowledged, \(missing.count) unaudited"
        )
        // Reload answers once the policy.apply records are stored.
        #expect(missing.isEmpty, "versions reported by Reload but never audited: \(missing.sorted())")
        try await FaultFixtures.expectSoundRestart(agent, failedAttempts: 2)
    }

    /// A burst of denied checks (each audited), then a kill: the record of every denial a client
    /// was answered is on disk, and so is every record an audit follower (`cordon audit --follow`,
    /// run as the user) received.
    @Test func killDuringAuditWritesLosesNoAcknowledgedRecord() async throws {
        let agent = try await UserAgent(policy: FaultFixtures.denyPastes, initialize: false)
        defer { agent.cleanUp() }
        try await FaultFixtures.unlockedWithTwoFailures(agent)

        // The follower writes to a file (a pipe left unread would stall it).
        let followedPath = agent.home.appending("followed.jsonl")
        let follower = try SpawnedCommand(
            path: UserAgent.asUser[0],
            arguments: Array(UserAgent.asUser.dropFirst()) + [
                "/bin/sh", "-c", "exec \"$0\" audit --follow --json > \"\(followedPath)\"", Binaries.cordon.path,
            ], environment: agent.userEnvironment)
        let hammer = try CallHammer(
            clients: 16, socket: agent.socketPath,
            request: FaultFixtures.deniedPaste
        ) { FaultFixtures.isDecision($0, allowed: false) }
        try await eventually(timeout: 300, "denials are answered") { hammer.acknowledged >= 3000 }
        agent.stop()
        let answered = await hammer.finish().reduce(0, +)
        _ = follower.finish(input: nil)
        let followedOutput = (try? String(contentsOfFile: followedPath, encoding: .utf8)) ?? ""
        let followed = Set(
            followedOutput.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? Int
            })
        #expect(followed.count >= 100, "the follower received \(followed.count) records")

        try await agent.restart()
        let database = try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true)
        let records = try database.queryAudit(AuditQuery(limit: 1_000_000))
        let stored = Set(records.map { Int($0.id) })
        let denials = records.filter { $0.action == "pasteboard.paste" && $0.outcome == "deny" }.count
        let lostFollowed = followed.subtracting(stored)
        print("audit burst: \(answered) denials answered, \(denials) on disk, \(followed.count) followed")
        #expect(lostFollowed.isEmpty, "records streamed to a follower were lost: \(lostFollowed.count)")
        // Check answers an audited decision once its record is stored (group commit).
        #expect(denials >= answered, "\(answered - denials) answered denials have no audit record")
        try await FaultFixtures.expectSoundRestart(agent, failedAttempts: 2)
    }

    /// `cordon policy status --json`, run as the user.
    static func policyStatus(_ agent: UserAgent) async throws -> [String: Any] {
        let status = try await agent.cli(["policy", "status", "--json"])
        return try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stderr)")
    }
}
