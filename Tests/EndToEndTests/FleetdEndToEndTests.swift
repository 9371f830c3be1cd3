import CordonFleet
import Crypto
import Foundation
import Testing

/// fleetd against a repository python-tuf made, served by a real nginx over HTTPS (test CA): policies
/// reach a running agent run by an ordinary user, every attack on the repository is refused with the
/// last good policy kept and an audit record, commands are handed on once (docs/FLEET.md).
@Suite(.serialized) struct FleetdEndToEndTests {
    static let basePolicy = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#
    static let newPolicy = #"{"schema": "cordon.policy.v1", "pasteboard": {"maxChars": 7}}"#

    /// A repository, nginx serving it, and fleetd's directories; `body` runs, then all is stopped.
    static func withFleet(
        policyDirectory: String? = nil, gzipLabel: Bool = false, metricsPort: Int? = nil,
        _ body: (FleetRepository, NginxServer, FleetdProcess) async throws -> Void
    ) async throws {
        let repository = try await FleetRepository()
        let nginx = try NginxServer(serving: repository.served, gzipLabel: gzipLabel)
        let policies = try TemporaryDirectory()
        let fleetd = try FleetdProcess(
            repository: repository, nginx: nginx, policyDirectory: policyDirectory ?? policies.path,
            metricsPort: metricsPort)
        defer {
            fleetd.cleanUp()
            nginx.stop()
            policies.remove()
            repository.directory.remove()
        }
        try await nginx.ready()
        try await body(repository, nginx, fleetd)
    }

    @Test func aPolicyPublishedWithPythonTUFReachesARunningAgent() async throws {
        let agent = try await UserAgent(policy: AttackIdentityTests.trusted)
        defer { agent.cleanUp() }
        try await Self.withFleet(policyDirectory: agent.system.appending("admin")) { repository, nginx, fleetd in
            try await repository.publish(["20-fleet.json": Self.basePolicy])
            try fleetd.start()
            try await eventually("the agent applied the fleet's policy") {
                let status = try await agent.cli(["policy", "status", "--json"])
                return status.stdout.contains("20-fleet.json") && status.stdout.contains("applied")
            }
            let show = try await agent.cli(["policy", "show"])
            #expect(show.stdout.contains("/pasteboard/copyOut"), "\(show.stdout)")

            // A new version, published while fleetd runs, arrives within the interval and its jitter.
            try await repository.publish(["20-fleet.json": Self.newPolicy])
            let file = agent.system.appending("admin/20-fleet.json")
            try await eventually("fleetd installed the new version") {
                try String(contentsOfFile: file, encoding: .utf8) == Self.newPolicy
            }
            try await eventually("the agent applied the new version") {
                let show = try await agent.cli(["policy", "show"])
                return show.stdout.contains("20-fleet.json#/pasteboard/maxChars")
            }
            #expect(fleetd.isRunning, "\(fleetd.log)")
            let attributes = try FileManager.default.attributesOfItem(
                atPath: agent.system.appending("admin/20-fleet.json"))
            #expect((attributes[.posixPermissions] as? Int) == 0o644 && (attributes[.ownerAccountID] as? Int) == 0)

            // The status the agents read, and the device's signed report the admin reads.
            let status = try FleetHandoff.Status(
                Array(Data(contentsOf: URL(fileURLWithPath: fleetd.fleetDirectory + "/status.json"))))
            let device = try await fleetd.deviceID()
            #expect(status.device == device && !status.isStale(at: Date()) && status.lastError == nil)
            try await eventually("the report reached the admin's endpoint") {
                let data = try Data(contentsOf: URL(fileURLWithPath: nginx.reportsDirectory + "/\(device).json"))
                let report = try FleetReport.verify(Array(data), device: device)
                return report.policies["20-fleet.json"] != nil
                    && report.policies["20-fleet.json"] == sha256(Self.newPolicy)
            }
        }
    }

    /// The whole way: a lock published with python-tuf reaches a running agent (the ordinary user,
    /// outside test mode) through fleetd and its directory, and runs once; a full wipe follows.
    @Test func aLockAndAWipePublishedReachARunningAgentOnce() async throws {
        let directory = try FleetDirectoryFixture()
        defer { directory.remove() }
        let agent = try await FleetCommandTests.agent(directory)
        defer { agent.cleanUp() }
        try await Self.withFleet { repository, _, fleetd in
            fleetd.fleetDirectoryOverride = directory.path
            let device = try await fleetd.deviceID()
            try fleetd.start()
            try await eventually("fleetd wrote the status the agent reads") {
                FileManager.default.fileExists(atPath: directory.path + "/status.json")
            }
            try await repository.command(device, "lock", reason: "reported lost")
            try await eventually("the published lock locks the agent") { try await agent.agentStatus().state.isLocked }
            // The record follows the action (docs/ARCHITECTURE.md, "Fleet commands in the agent").
            try await eventually("#1 is recorded executed") { try await agent.fleetRecords(1, "executed") == 1 }
            let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: FleetCommandTests.passcode)
            try #require(unlocked.status == 0, "\(unlocked.stderr)")
            try await repository.command(device, "wipe")
            try await eventually("the published wipe erases the container") {
                try await agent.agentStatus().state == .uninitialized
            }
            try await eventually("#2 is recorded executed") { try await agent.fleetRecords(2, "executed") == 1 }
            #expect(try await agent.fleetRecords(1, "executed") == 1)
            #expect(fleetd.isRunning, "\(fleetd.log)")
        }
    }

    /// The README's path: a workspace made with `cordon fleet` (init, publish, command), served as is.
    @Test func aRepositoryMadeWithCordonFleetIsFollowed() async throws {
        let workspace = try TemporaryDirectory()
        defer { workspace.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.path)
        let fleet = workspace.appending("fleet")
        let policies = workspace.appending("policies")
        try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
        try Self.basePolicy.write(toFile: policies + "/20-fleet.json", atomically: true, encoding: .utf8)
        let made = try await runCommand(Binaries.cordon, ["fleet", "init", fleet])
        #expect(made.status == 0, "\(made.stderr)")
        let published = try await runCommand(Binaries.cordon, ["fleet", "publish", fleet, "--policies", policies])
        #expect(published.status == 0, "\(published.stderr)")
        let nginx = try NginxServer(serving: fleet + "/repository")
        defer { nginx.stop() }
        try await nginx.ready()
        let shipped = workspace.appending("root.json")
        try FileManager.default.copyItem(atPath: fleet + "/repository/1.root.json", toPath: shipped)
        let target = try TemporaryDirectory()
        defer { target.remove() }
        let fleetd = try FleetdProcess(shippedRoot: shipped, nginx: nginx, policyDirectory: target.path)
        defer { fleetd.cleanUp() }
        let first = try await fleetd.pollOnce()
        #expect(first.status == 0, "\(first.stdout)")
        #expect(try String(contentsOfFile: target.appending("20-fleet.json"), encoding: .utf8) == Self.basePolicy)

        let device = try await fleetd.deviceID()
        let issued = try await runCommand(Binaries.cordon, ["fleet", "command", fleet, "--device", device, "--lock"])
        #expect(issued.status == 0, "\(issued.stderr)")
        let second = try await fleetd.pollOnce()
        #expect(second.status == 0, "\(second.stdout)")
        #expect(fleetd.handedCommands == [FleetHandoff.commandFileName(1)])
        // The timestamp re-signed within the same second is still seen (its ETag changed).
        let resigned = try await runCommand(Binaries.cordon, ["fleet", "timestamp", fleet])
        #expect(resigned.status == 0, "\(resigned.stderr)")
        let third = try await fleetd.pollOnce()
        #expect(third.stdout.contains("verified: updated"), "\(third.stdout)")
    }

    @Test func anAttackedRepositoryIsRefusedAndTheLastGoodPolicyKept() async throws {
        try await Self.withFleet { repository, nginx, fleetd in
            try await repository.publish(["20-fleet.json": Self.basePolicy])
            let first = try await fleetd.pollOnce()
            #expect(first.status == 0 && first.stdout.contains("verified: updated"), "\(first.stdout)\(first.stderr)")
            // A poll with nothing new costs one conditional request, answered 304.
            let requests = nginx.accessLog.count
            let again = try await fleetd.pollOnce()
            #expect(again.status == 0 && again.stdout.contains("verified: unchanged"), "\(again.stdout)")
            let since = nginx.accessLog.dropFirst(requests)
            #expect(since.count == 1 && since.first?.contains("GET /timestamp.json") == true, "\(since)")
            #expect(since.first?.contains("\" 304 ") == true, "\(since)")
            let installed = fleetd.policyDirectory + "/20-fleet.json"
            #expect(try String(contentsOfFile: installed, encoding: .utf8) == Self.basePolicy)

            // Each attack: refused with its kind, nothing installed, an audit record.
            for (attack, kind, role) in [
                ("rollback-timestamp", "rollback", "timestamp"), ("expired-timestamp", "expired", "timestamp"),
                ("foreign-key", "threshold", "targets"),
            ] {
                if attack == "foreign-key" { try await repository.timestamp() }
                let before = fleetd.audit.count
                try await repository.attack(attack)
                let result = try await fleetd.pollOnce()
                #expect(result.status == 1, "\(attack): \(result.stdout)")
                #expect(result.stdout.contains("\(role): \(kind)"), "\(attack): \(result.stdout)")
                let records = fleetd.audit.dropFirst(before)
                #expect(
                    records.contains {
                        $0["event"] == "repository.refused" && $0["kind"] == kind && $0["role"] == role
                    },
                    "\(attack): \(records)")
                #expect(try String(contentsOfFile: installed, encoding: .utf8) == Self.basePolicy, "\(attack)")
                #expect(!FileManager.default.fileExists(atPath: fleetd.policyDirectory + "/99-evil.json"))
            }
        }
    }

    @Test func aFileLongerThanPromisedIsNotReadToTheEnd() async throws {
        try await Self.withFleet { repository, _, fleetd in
            try await repository.publish(["20-fleet.json": Self.basePolicy])
            try await repository.attack("long-target")
            let result = try await fleetd.pollOnce()
            #expect(result.status == 1 && result.stdout.contains("target: length"), "\(result.stdout)")
            #expect(!FileManager.default.fileExists(atPath: fleetd.policyDirectory + "/20-fleet.json"))
            #expect(fleetd.audit.contains { $0["event"] == "repository.refused" && $0["kind"] == "length" })
        }
    }

    /// A compressed bomb (64 MiB of zeros in 64 KiB of gzip, labelled `Content-Encoding: gzip`):
    /// fleetd decompresses nothing and reads no more than the promised length.
    @Test func aCompressedBombIsNeitherInflatedNorInstalled() async throws {
        try await Self.withFleet(gzipLabel: true) { repository, _, fleetd in
            try await repository.publish(["20-fleet.json": Self.basePolicy])
            try await repository.attack("gzip-bomb")
            let result = try await fleetd.pollOnce()
            #expect(result.status == 1 && result.stdout.contains("target: length"), "\(result.stdout)\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: fleetd.policyDirectory + "/20-fleet.json"))
            #expect(fleetd.audit.contains { $0["event"] == "repository.refused" && $0["kind"] == "length" })
        }
    }

    @Test func aFrozenRepositoryMakesThePolicyStale() async throws {
        try await Self.withFleet { repository, _, fleetd in
            try await repository.publish(["20-fleet.json": Self.basePolicy])
            // The admins stop re-signing: the last timestamp expires in 2 s and the server keeps serving it.
            try await repository.timestamp(expiresIn: 2)
            let first = try await fleetd.pollOnce()
            #expect(first.status == 0, "\(first.stdout)")
            let status = fleetd.fleetDirectory + "/status.json"
            let fresh = try FleetHandoff.Status(Array(Data(contentsOf: URL(fileURLWithPath: status))))
            #expect(!fresh.isStale(at: Date()))
            let staleAfter = try #require(fresh.staleAfter)
            // Polls after the expiry are refused (the server answers 304: nothing new) …
            try await eventually("the frozen timestamp is refused") {
                let result = try await fleetd.pollOnce()
                return result.status == 1 && result.stdout.contains("timestamp: expired")
            }
            // … and from expiry plus the interval the agents judge the policy stale.
            let frozen = try FleetHandoff.Status(Array(Data(contentsOf: URL(fileURLWithPath: status))))
            #expect(frozen.staleAfter == staleAfter && frozen.isStale(at: staleAfter))
            #expect(frozen.lastError?.contains("expired") == true)
            #expect(
                try String(contentsOfFile: fleetd.policyDirectory + "/20-fleet.json", encoding: .utf8)
                    == Self.basePolicy)
        }
    }

    @Test func commandsAreHandedOnOnceAndForgeriesRefused() async throws {
        try await Self.withFleet { repository, _, fleetd in
            let device = try await fleetd.deviceID()
            let other = String(repeating: "b", count: 64)
            try await repository.command(device, "lock")
            try await repository.command(other, "wipe")
            var result = try await fleetd.pollOnce()
            #expect(result.status == 0, "\(result.stdout)")
            #expect(fleetd.handedCommands == [FleetHandoff.commandFileName(1)])
            let handed = try FleetHandoff.command(
                Array(
                    Data(
                        contentsOf: URL(
                            fileURLWithPath: fleetd.fleetDirectory + "/commands/" + FleetHandoff.commandFileName(1)))))
            #expect(handed.command.kind == .lock && handed.device == device)

            // Polled again (and after a kill -9 between handing on and persisting): nothing new.
            result = try await fleetd.pollOnce()
            #expect(result.status == 0 && fleetd.handedCommands.count == 1)

            // Expired; another counter reused for a different command; a wipe of two machines signed
            // by one command key: each refused and audited, none handed on.
            try await repository.command(device, "lock", expiresIn: -60)
            try await repository.command(device, "wipe", counter: 1)
            try await repository.command(device, "wipe", devices: [device, other])
            result = try await fleetd.pollOnce()
            #expect(result.status == 0, "\(result.stdout)")
            let refused = fleetd.audit.filter { $0["event"] == "command.refused" }.compactMap { $0["reason"] }
            #expect(Set(refused) == ["expired", "replayed", "wipeThreshold"], "\(fleetd.audit)")
            #expect(fleetd.handedCommands.count == 1)

            // The same wipe signed by both command keys (the root's wipe threshold, 2) is handed on.
            try await repository.command(
                device, "wipeApp", app: "com.example.notes", devices: [device, other], bothKeys: true)
            result = try await fleetd.pollOnce()
            #expect(result.status == 0)
            #expect(fleetd.handedCommands.count == 2, "\(fleetd.audit)")
        }
    }

    /// fleetd killed right after handing a command on, and right before saving its state: the next
    /// poll hands the same file on (left as it was), nothing is skipped or handed on twice.
    @Test(arguments: ["handedOn", "beforeSave"])
    func aCrashedPollNeitherSkipsNorRepeatsACommand(_ point: String) async throws {
        try await Self.withFleet { repository, _, fleetd in
            let device = try await fleetd.deviceID()
            try await repository.command(device, "lock")
            try await repository.command(device, "wipeApp", app: "com.example.notes")
            let crashed = try await fleetd.pollOnce(crashAt: point)
            #expect(crashed.status == 137, "\(crashed.stdout)\(crashed.stderr)")
            let name = FleetHandoff.commandFileName(1)
            let first = try Data(contentsOf: URL(fileURLWithPath: fleetd.fleetDirectory + "/commands/" + name))
            let result = try await fleetd.pollOnce()
            #expect(result.status == 0, "\(result.stdout)")
            #expect(fleetd.handedCommands == [FleetHandoff.commandFileName(1), FleetHandoff.commandFileName(2)])
            #expect(try Data(contentsOf: URL(fileURLWithPath: fleetd.fleetDirectory + "/commands/" + name)) == first)
            #expect(fleetd.audit.filter { $0["event"] == "command.refused" }.isEmpty, "\(fleetd.audit)")
            let again = try await fleetd.pollOnce()
            #expect(again.status == 0 && fleetd.handedCommands.count == 2)
        }
    }

    @Test func theDeviceKeyIsSealedToTheTPMAndOpensOnlyThere() async throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        try await Self.withFleet { _, _, fleetd in
            fleetd.tcti = tpm.tcti
            let made = try await fleetd.id(["--verbose"])
            #expect(made.status == 0 && made.stdout.contains("sealed to the TPM"), "\(made.stdout)\(made.stderr)")
            let id = try await fleetd.deviceID()
            #expect(made.stdout.hasPrefix(id))
            #expect(FileManager.default.fileExists(atPath: fleetd.stateDirectory + "/device-key.tpm"))
            #expect(!FileManager.default.fileExists(atPath: fleetd.stateDirectory + "/device-key"), "no copy in a file")
            let sealed = try String(contentsOfFile: fleetd.stateDirectory + "/device-key.tpm", encoding: .utf8)
            #expect(sealed.split(separator: "\n").count == 4)

            // Another TPM (another machine, or a cleared one) cannot open it: the id is not taken along.
            let elsewhere = try SoftwareTPM()
            defer { elsewhere.stop() }
            fleetd.tcti = elsewhere.tcti
            let moved = try await fleetd.id()
            #expect(moved.status == 1 && moved.stderr.contains("cannot unseal"), "\(moved.stdout)\(moved.stderr)")
            fleetd.tcti = nil
            let noTPM = try await fleetd.id()
            #expect(noTPM.status == 1 && noTPM.stderr.contains("sealed to a TPM and there is none"), "\(noTPM.stderr)")
        }
    }

    @Test func theDeviceIDIsStableAndItsKeyRootsOnly() async throws {
        try await Self.withFleet { _, _, fleetd in
            let first = try await fleetd.deviceID()
            #expect(first.count == 64 && first.allSatisfy(\.isHexDigit))
            #expect(try await fleetd.deviceID() == first)
            let attributes = try FileManager.default.attributesOfItem(atPath: fleetd.stateDirectory + "/device-key")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let state = try FileManager.default.attributesOfItem(atPath: fleetd.stateDirectory)
            #expect((state[.posixPermissions] as? Int) == 0o700)
        }
    }
}

private func sha256(_ text: String) -> String { TUFHex.encode(SHA256.hash(data: Array(text.utf8))) }
