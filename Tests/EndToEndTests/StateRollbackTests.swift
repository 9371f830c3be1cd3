import CordonProtocol
import CordonStore
import CordonTrust
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "State the user cannot roll back": the insider — the user, who knows the
/// passcode and keeps copies of the data directory — edits the database and puts old copies back
/// with a same-user Python program (`sqlite3`, raw varlink), then uses Cordon as usual. With a TPM
/// (swtpm) the state is anchored to an NV counter: an HOTP counter put back, a full wipe undone,
/// failed attempts reset and a policy serial deleted are each refused as `StateRolledBack`, with an
/// audit record, and nothing opens. cordond, the CLI and the attacker run as one ordinary user
/// (``UserAgent``), in test mode only because a simulator's TCTI needs it.
@Suite(.serialized) struct StateRollbackTests {
    static let passcode = "2468"
    static let policy = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
         "tokens": {"codeReaders": ["com.example.reader"]}}
        """#
    /// A 20-byte HOTP seed and its base32 form (`TokenAttackTests`).
    static let seed = "cordon-seed-marker-1"
    static let seedBase32 = "MNXXEZDPNYWXGZLFMQWW2YLSNNSXELJR"

    /// An initialized container whose key and state the simulator anchors.
    func agent(_ simulator: SoftwareTPM, policy: String = policy) async throws -> UserAgent {
        try await agentAndRecoveryKey(simulator, policy: policy).agent
    }

    /// As ``agent(_:policy:)``, and the recovery key `cordon init` printed.
    func agentAndRecoveryKey(_ simulator: SoftwareTPM, policy: String = policy) async throws -> (
        agent: UserAgent, recoveryKey: String
    ) {
        let agent = try await UserAgent(
            policy: policy, initialize: false,
            arguments: ["--tpm-tcti", simulator.tcti, "--backoff-base-seconds", "0"], testMode: true)
        do {
            let initialized = try await agent.cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
            try #require(initialized.status == 0, "\(initialized.stderr)")
            return (agent, try RecoveryKeyTests().recoveryKey(in: initialized.stdout))
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    /// The error of `Unlock` with the passcode, nil when it unlocked.
    func unlock(_ agent: UserAgent) async throws -> (error: String?, reason: String?) {
        let reply = try await agent.varlink("io.cordon.Agent.Unlock", ["passcode": Self.passcode])
        return (reply["error"] as? String, (reply["parameters"] as? [String: Any])?["reason"] as? String)
    }

    /// Runs SQL on the agent's database as the user (the agent stopped or running).
    func edit(_ agent: UserAgent, _ statements: [String]) async throws {
        _ = try await agent.attack(
            """
            import sqlite3
            db = sqlite3.connect(sys.argv[2])
            for statement in sys.argv[3:]:
                db.execute(statement)
            db.commit()
            print(json.dumps({}))
            """, [agent.home.appending("data/cordon.sqlite")] + statements)
    }

    /// The audit records of the refused state (as the user reads them, after a restart).
    func stateRecords(_ agent: UserAgent) async throws -> [[String: Any]] {
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            records = call(s, "io.cordon.Audit.Query", {"limit": 1000})["parameters"]["records"]
            print(json.dumps({"records": [r for r in records if r.get("action") == "state.anchor"]}))
            """)
        return answer["records"] as? [[String: Any]] ?? []
    }

    /// The refusal is what the user meets everywhere: the typed error, `status`, `doctor`, the audit.
    func expectRefused(_ agent: UserAgent, _ why: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let refused = try await unlock(agent)
        #expect(refused.error == "io.cordon.Agent.StateRolledBack", "\(why)", sourceLocation: sourceLocation)
        #expect(try await agent.agentStatus().state == .lockedNoKey, sourceLocation: sourceLocation)
        let status = try await agent.cli(["status"])
        #expect(status.stdout.contains("StateRolledBack"), "\(status.stdout)", sourceLocation: sourceLocation)
        let doctor = try await agent.cli(["doctor"])
        #expect(
            doctor.stdout.contains("FAIL  key protection") && doctor.stdout.contains("cordon wipe --yes"),
            "\(doctor.stdout)", sourceLocation: sourceLocation)
        let records = try await stateRecords(agent)
        #expect(records.contains { $0["outcome"] as? String == "refused" }, sourceLocation: sourceLocation)
    }

    @Test func anHOTPCounterPutBackGivesNoCodeTwice() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator)
        defer { agent.cleanUp() }
        #expect(try await unlock(agent).error == nil)
        let uri = "otpauth://hotp/Example:alice?secret=\(Self.seedBase32)&issuer=Example&counter=5"
        let first = try await agent.attack(
            """
            sock, uri, passcode = sys.argv[1:4]
            s = connect(sock)
            imp = call(s, "io.cordon.Tokens.Import", {"data": uri, "passcode": passcode})
            serial = imp["parameters"]["tokens"][0]["serial"]
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            code = call(s, "io.cordon.Tokens.Code", {"serial": serial})
            print(json.dumps({"serial": serial, "code": code["parameters"]["code"]}))
            """, [uri, Self.passcode])
        let hex = Self.seed.utf8.map { String(format: "%02x", $0) }.joined()
        let atFive = try await TokenAttackTests.oathtool(hex, counter: 5)
        #expect(first["code"] as? String == atFive)
        let serial = try #require(first["serial"] as? String)

        // Put back while the agent runs: the next code is refused, not counter 5's again.
        try await edit(agent, ["UPDATE token SET counter = 5"])
        let again = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            reply = call(s, "io.cordon.Tokens.Code", {"serial": sys.argv[2]})
            print(json.dumps({"error": error(reply), "code": reply.get("parameters", {}).get("code")}))
            """, [serial])
        #expect(again["error"] as? String == "io.cordon.Agent.StateRolledBack", "\(again)")
        #expect(again["code"] as? String != atFive, "the code of counter 5 was given twice")
        // Found while the container was unlocked: the key is revoked at once, not at the next start.
        try await eventually("the container locked") { try await agent.agentStatus().state == .lockedNoKey }

        // And across a restart: nothing opens.
        try await agent.restart()
        try await expectRefused(agent, "the container unlocked with an HOTP counter put back")
    }

    @Test func aFullWipeIsNotUndoneByPuttingBackTheDataDirectory() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let (agent, recoveryKey) = try await agentAndRecoveryKey(simulator)
        defer { agent.cleanUp() }
        #expect(try await unlock(agent).error == nil)
        #expect(try await agent.agentStatus().keyProtection?.stateAnchor?.hasPrefix("TPM NV counter 0x01") == true)
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("ok    security state anchored to the TPM NV counter"), "\(doctor.stdout)")
        // The insider's copy, made while the container was whole.
        let data = agent.home.appending("data")
        let copy = agent.home.appending("data-copy")
        #expect(try await runCommand(URL(fileURLWithPath: "/bin/cp"), ["-a", data, copy]).status == 0)
        let wiped = try await agent.cli(["wipe", "--yes", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(wiped.status == 0, "\(wiped.stderr)")
        agent.stop()
        #expect(try await runCommand(URL(fileURLWithPath: "/bin/rm"), ["-rf", data]).status == 0)
        #expect(try await runCommand(URL(fileURLWithPath: "/bin/cp"), ["-a", copy, data]).status == 0)
        try await agent.restart()
        try await expectRefused(agent, "the container put back after a wipe unlocked with the old passcode")
        // Nor does the recovery key made before the wipe restore it through the agent.
        let recovered = try await RecoveryKeyTests().call(
            agent, "io.cordon.Agent.Recover", recovery: recoveryKey, passcode: "8642")
        #expect(recovered.error == "io.cordon.Agent.StateRolledBack", "\(recovered)")
        #expect(agent.log.contains("the database is older than the TPM's counter"), "\(agent.log)")
        // The way out the message names: a wipe, then a new container.
        let again = try await agent.cli(["wipe", "--yes", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(again.status == 0, "\(again.stderr)")
        let remade = try await agent.cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(remade.status == 0, "\(remade.stderr)")
        #expect(try await unlock(agent).error == nil)
    }

    @Test func failedAttemptsResetInTheDatabaseAreNotRegained() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator)
        defer { agent.cleanUp() }
        for _ in 0..<2 {
            let wrong = try await agent.varlink("io.cordon.Agent.Unlock", ["passcode": "0000"])
            #expect(wrong["error"] as? String == "io.cordon.Agent.WrongPasscode")
        }
        #expect(try await agent.agentStatus().failedAttempts == 2)
        agent.stop()
        try await edit(agent, ["UPDATE attempts SET failed = 0, lastFailureAt = NULL"])
        try await agent.restart()
        try await expectRefused(agent, "the container took the attempts reset in the database")
    }

    @Test func aDeletedPolicySerialDoesNotBringBackAnOlderSignedPolicy() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator, policy: #"{"schema": "cordon.policy.v1"}"#)
        defer { agent.cleanUp() }
        let signing = AttackPolicySigningTests()
        let pair = PolicySigning.generateKeyPair()
        try FileManager.default.removeItem(atPath: agent.system.appending("admin/10-apps.json"))
        try pair.publicKey.write(toFile: agent.system.appending("trust/admin.pub"), atomically: true, encoding: .utf8)
        try pair.privateKey.write(toFile: agent.system.appending("admin.key"), atomically: true, encoding: .utf8)
        try await agent.restart()
        let older = try await signing.sign(agent, AttackPolicySigningTests.lenient, as: "10-base.json", serial: 1)
        let newer = try await signing.sign(agent, AttackPolicySigningTests.strict, as: "10-base.json", serial: 2)
        try await signing.install(older, as: "10-base.json", in: agent)
        #expect(try await signing.status(agent, "10-base.json").0.problems.isEmpty)
        try await signing.install(newer, as: "10-base.json", in: agent)
        #expect(try await signing.status(agent, "10-base.json").0.problems.isEmpty)
        agent.stop()
        // The ledger forgotten, the older file back in place: refused as rolled back, not applied.
        try await edit(agent, ["DELETE FROM policySerial"])
        try await signing.install(older, as: "10-base.json", in: agent)
        try await agent.restart()
        let (source, _) = try await signing.status(agent, "10-base.json")
        #expect(
            source.problems.contains {
                $0.contains("cannot record serial 1") && $0.contains("changed outside the agent")
            },
            "\(source.problems)")
        try await expectRefused(agent, "the container unlocked with the policy ledger deleted")
    }

    @Test func aWipedAppsKeyRowPutBackIsRefused() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let agent = try await agent(simulator)
        defer { agent.cleanUp() }
        let app = AppKeyEraseAttackTests.app
        let storage = { (command: [String]) in
            try await agent.cli(
                ["storage"] + command.prefix(1) + ["--app", app, "--passcode-stdin"] + command.dropFirst(),
                input: Self.passcode + "\n")
        }
        #expect(try await unlock(agent).error == nil)
        let put = try await storage(["put", "draft", AppKeyEraseAttackTests.value])
        try #require(put.status == 0, "storage put: \(put.stderr)")
        // The insider keeps the app's wrapped key row and its storage file, then wipes the app.
        let wrapped = try await AppKeyEraseAttackTests.stash(agent)
        let wipe = try await agent.cli(["wipe", "--app", app, "--passcode-stdin"], input: Self.passcode + "\n")
        try #require(wipe.status == 0, "wipe: \(wipe.stderr)")
        agent.stop()
        // Without a TPM the row is gone for good (AppKeyEraseAttackTests); here the insider puts
        // the old row back as well, with the file.
        _ = try await AppKeyEraseAttackTests.deleteRowsAndRestore(agent, wrapped: wrapped)
        try await edit(agent, ["INSERT INTO appKey (appId, wrapped, createdAt) VALUES ('\(app)', X'\(wrapped)', 1)"])
        try await agent.restart()
        try await expectRefused(agent, "the container unlocked with a wiped app's key row put back")
        let get = try await storage(["get", "draft"])
        #expect(!get.stdout.contains(AppKeyEraseAttackTests.value), "\(get.stdout)")
    }

    @Test func aCounterRemovedFromTheTPMLeavesOnlyTheRecoveryKey() async throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let (agent, recoveryKey) = try await agentAndRecoveryKey(simulator)
        defer { agent.cleanUp() }
        let anchor = try #require(try await agent.agentStatus().keyProtection?.stateAnchor)
        let index = String(try #require(anchor.split(separator: " ").last))
        agent.stop()
        // The owner's authorization is empty on this TPM (as on most desktops): the counter goes.
        try simulator.tpm2("nvundefine", [index, "-C", "o"])
        try await agent.restart()
        // The key's own seal still opens with the passcode, but the state is not trusted: refused.
        let refused = try await unlock(agent)
        #expect(refused.error == "io.cordon.Agent.StateRolledBack", "\(refused)")
        #expect(refused.reason?.contains("no longer holds the counter") == true, "\(refused)")
        // The recovery key restores, under a new anchor.
        let recovered = try await RecoveryKeyTests().call(
            agent, "io.cordon.Agent.Recover", recovery: recoveryKey, passcode: "8642")
        #expect(recovered.error == nil, "\(recovered)")
        let renewed = try #require(try await agent.agentStatus().keyProtection?.stateAnchor)
        #expect(renewed != anchor)
        let unlocked = try await agent.outcome("io.cordon.Agent.Unlock", ["passcode": "8642"])
        #expect(unlocked.error == nil, "\(unlocked)")
    }
}
