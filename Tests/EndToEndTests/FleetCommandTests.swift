import CordonProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Fleet commands executed by a running agent (docs/ARCHITECTURE.md, "Fleet commands in the
/// agent"): cordond, the CLI and the apps run as the ordinary user outside test mode
/// (``UserAgent``); the test, root, writes the command files into a root-owned fleet directory as
/// cordon-fleetd would.
@Suite(.enabled(if: getuid() == 0, "root owns the fleet directory; cordond runs as the test user"))
struct FleetCommandTests {
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#
    static let notes = ["--app", "com.example.notes", "--passcode-stdin"]
    static var passcode: String { UserAgent.passcode + "\n" }

    static func agent(_ fleet: FleetDirectoryFixture, testMode: Bool = false, environment: [String: String] = [:])
        async throws -> UserAgent
    {
        try await UserAgent(
            policy: policy, arguments: ["--fleet-dir", fleet.path], testMode: testMode, environment: environment)
    }

    static func put(_ agent: UserAgent, _ name: String) async throws {
        let put = try await agent.cli(["storage", "put"] + notes + [name, "kept by notes"], input: passcode)
        try #require(put.status == 0, "\(put.stderr)")
    }

    static func names(_ agent: UserAgent) async throws -> String {
        try await agent.cli(["storage", "ls"] + notes, input: passcode).stdout
    }

    @Test func lockWipeAppAndWipeEachRunOnceAndANewContainerIgnoresThem() async throws {
        let fleet = try FleetDirectoryFixture()
        defer { fleet.remove() }
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(3600))
        let agent = try await Self.agent(fleet)
        defer { agent.cleanUp() }
        try await Self.put(agent, "draft")

        try fleet.write(1, .lock, reason: "lost on a train")
        try await eventually("the lock command locks") { try await agent.agentStatus().state.isLocked }
        // The record is written once `done` is committed, after the action: wait for it.
        try await eventually("#1 is recorded executed") { try await agent.fleetRecords(1, "executed") == 1 }
        let status = try await agent.status()
        let row = status["fleet"] as? [String: Any]
        #expect(row?["device"] as? String == FleetDirectoryFixture.device && row?["stale"] as? Bool == false)
        #expect(row?["lastCommand"] as? String == "#1 lock done", "\(status)")
        let text = try await agent.cli(["status"]).stdout
        #expect(text.contains("fleet:") && text.contains(FleetDirectoryFixture.device) && text.contains("#1 lock done"))

        // A second copy of the same command, under another name: history.
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: Self.passcode)
        try #require(unlocked.status == 0, "\(unlocked.stderr)")
        try fleet.write(1, .lock, file: 2, reason: "lost on a train")
        try fleet.write(3, .wipeApp, app: "com.example.notes")
        try await eventually("the wipeApp command wipes the app") { try await Self.names(agent).isEmpty }
        #expect(try await agent.agentStatus().state == .unlocked, "the copy of the lock did nothing")
        try await eventually("#3 is recorded executed") { try await agent.fleetRecords(3, "executed") == 1 }
        #expect(try await agent.fleetRecords(1, "executed") == 1)
        #expect(try await agent.auditRecords("storage.wipe").count == 1)

        try fleet.write(4, .wipe)
        try await eventually("the wipe command erases the container") {
            try await agent.agentStatus().state == .uninitialized
        }
        try await eventually("#4 is recorded executed") { try await agent.fleetRecords(4, "executed") == 1 }

        // A container made now does not execute what was there before it.
        let initialized = try await agent.cli(["init", "--passcode-stdin"], input: Self.passcode)
        try #require(initialized.status == 0, "\(initialized.stderr)")
        _ = try await agent.cli(["unlock", "--passcode-stdin"], input: Self.passcode)
        try await Self.put(agent, "after")
        try fleet.write(5, .refresh)
        try await eventually("a later command runs") { try await agent.fleetRecords(5, "executed") == 1 }
        #expect(try await agent.agentStatus().state == .unlocked)
        #expect(try await Self.names(agent) == "after\n")
        for counter in [1, 3, 4] { #expect(try await agent.fleetRecords(counter, "executed") == 1, "#\(counter)") }
    }

    @Test func replayedAndOtherDeviceCommandsAreRefusedAndAudited() async throws {
        let fleet = try FleetDirectoryFixture()
        defer { fleet.remove() }
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(3600))
        let agent = try await Self.agent(fleet)
        defer { agent.cleanUp() }
        try fleet.write(1, .wipe, device: "sha256-another-device")
        try fleet.write(2, .refresh)
        try await eventually("the refresh runs") { try await agent.fleetRecords(2, "executed") == 1 }
        try fleet.write(2, .wipe, file: 3)
        try await eventually("the replay is refused") { try await agent.fleetRecords(2, "refused") == 1 }
        let refused = try await agent.auditRecords("fleet.command").filter { $0["outcome"] as? String == "refused" }
        let reasons = refused.compactMap { $0["reason"] as? String }
        #expect(reasons.contains { $0.hasPrefix("fleet command #1 wipe: otherDevice") }, "\(reasons)")
        #expect(reasons.contains { $0.hasPrefix("fleet command #2 wipe: replayed") }, "\(reasons)")
        #expect(try await agent.agentStatus().state == .unlocked, "nothing was wiped")
    }

    /// cordond exits as killed (the test-mode hook) right after `executing` is committed, or right
    /// after the selective wipe, before `done`: after the restart the command has taken effect,
    /// is recorded executed once, and a later pass does not wipe the data written since.
    @Test(arguments: ["executing", "acted"])
    func aKillMidCommandNeitherSkipsNorRepeatsIt(_ point: String) async throws {
        let fleet = try FleetDirectoryFixture()
        defer { fleet.remove() }
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(3600))
        // Test mode: the crash hook is honoured only there.
        let agent = try await Self.agent(fleet, testMode: true, environment: ["CORDON_TEST_FLEET_CRASH": point + ":1"])
        defer { agent.cleanUp() }
        try await Self.put(agent, "draft")
        try fleet.write(1, .wipeApp, app: "com.example.notes")
        try await eventually("cordond exits at \(point)") { !agent.process.isRunning }
        #expect(agent.process.terminationStatus == 137)
        #expect(try await agent.fleetRecords(1, "executed") == 0)
        try await agent.restart()
        try await eventually("the command is performed again") { try await agent.fleetRecords(1, "executed") == 1 }
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: Self.passcode)
        try #require(unlocked.status == 0, "\(unlocked.stderr)")
        let listed = try await agent.cli(["storage", "ls"] + Self.notes, input: Self.passcode)
        #expect(listed.status == 0 && listed.stdout.isEmpty, "\(listed.stderr)")
        // The wipe ran before the kill at `acted` and again at the restart (it is idempotent); at
        // `executing` only at the restart.
        #expect(try await agent.auditRecords("storage.wipe").count == (point == "acted" ? 2 : 1))
        try await Self.put(agent, "after")
        try fleet.write(2, .refresh)
        try await eventually("a later pass ends") { try await agent.fleetRecords(2, "executed") == 1 }
        #expect(try await Self.names(agent) == "after\n", "the data written since is not wiped again")
        #expect(try await agent.fleetRecords(1, "executed") == 1)
    }

    @Test func aStaleFleetWithPolicyStaleLockLocksUntilFreshAgain() async throws {
        let fleet = try FleetDirectoryFixture()
        defer { fleet.remove() }
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(3600))
        let agent = try await UserAgent(
            policy:
                #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "conditions": {"policyStale": "lock"}}"#,
            arguments: ["--fleet-dir", fleet.path])
        defer { agent.cleanUp() }
        #expect(try await agent.agentStatus().state == .unlocked)
        let doctorFresh = try await agent.cli(["doctor"])
        #expect(
            doctorFresh.stdout.contains("ok    fleet: device \(FleetDirectoryFixture.device)"), "\(doctorFresh.stdout)")
        // fleetd writes a status whose staleAfter has passed.
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(-1))
        try await eventually("a stale fleet locks the container") { try await agent.agentStatus().state.isLocked }
        #expect(try await agent.agentStatus().fleet?.stale == true)
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("FAIL  fleet:") && doctor.stdout.contains("STALE (policyStale: lock)"))
        try await eventually("the stale lock is audited") {
            try await agent.auditRecords("fleet.policyStale").contains { $0["outcome"] as? String == "locked" }
        }
        // Fresh again: an unlock stays.
        try fleet.writeStatus(staleAfter: Date().addingTimeInterval(3600))
        try await eventually("the fleet is fresh again") { try await agent.agentStatus().fleet?.stale == false }
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: Self.passcode)
        #expect(unlocked.status == 0)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await agent.agentStatus().state == .unlocked)
    }
}

/// docs/THREAT-MODEL.md, "Admin policy": the fleet directory is an admin input. The same user
/// cannot write a command into it, and outside test mode cordond refuses a fleet directory of the
/// user's own.
@Suite(.enabled(if: getuid() == 0, "root owns the fleet directory; cordond and the attacker run as the test user"))
struct AttackFleetDirectoryTests {
    @Test func theUserCannotWriteACommandIntoTheFleetDirectory() async throws {
        let fleet = try FleetDirectoryFixture()
        defer { fleet.remove() }
        for target in [fleet.commands + "/000000000001.json", fleet.path + "/status.json"] {
            let result = try await runCommand(
                URL(fileURLWithPath: TestUser.asUser[0]),
                Array(TestUser.asUser.dropFirst()) + ["/bin/sh", "-c", "echo '{}' > \(target)"])
            #expect(result.status != 0 && result.stderr.contains("Permission denied"), "\(target): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }

    @Test func cordondRefusesAFleetDirectoryOfTheUsersOwn() async throws {
        let tree = try AttackAdminPathTests.Tree()
        defer { tree.root.remove() }
        let own = tree.home + "/fleet"
        try await AttackAdminPathTests.asUser(["/bin/mkdir", "-p", own + "/commands"])
        let said = try await AttackAdminPathTests().refused(tree, ["--fleet-dir", own])
        #expect(said.contains("--fleet-dir names \(own)"), "\(said)")
        let byVariable = try await AttackAdminPathTests().refused(tree, [], environment: ["CORDON_FLEET_DIR": own])
        #expect(byVariable.contains("CORDON_FLEET_DIR names \(own)"), "\(byVariable)")
    }
}
