import CordonFleet
import CordonFleetAdmin
import Foundation
import Testing

/// A workspace made by init, publish and command, read by the Swift verifier and by python-tuf's
/// ngclient; then a second publish and command, which both follow from what they trusted.
@Suite struct FleetRepositoryTests {
    static let base = "{\"schema\": \"cordon.policy.v1\", \"rules\": 1}\n"
    static let baseSig = "cordon-policy-signature-v2\nname=10-base.json\n"

    @Test func initPublishCommandIsAcceptedByBothClients() throws {
        let directory = try FleetTest.temporaryDirectory()
        let made = try FleetWorkspace.create(at: directory)
        var fleet = made.workspace
        let repository = fleet.repository
        let device = FleetTest.device("laptop-1")
        let policies = try FleetTest.policyDirectory([
            "10-base.json": Self.base, "10-base.json.sig": Self.baseSig, "README": "ignored",
        ])
        let published = try fleet.publish(policies: policies)
        #expect(published.added == ["policies/10-base.json", "policies/10-base.json.sig"])
        #expect(published.versions == [.targets: 2, .snapshot: 2, .timestamp: 2])
        let issued = try fleet.issue(FleetCommandRequest(kind: .lock, devices: [device], reason: "lost"))
        #expect(issued.counters.map(\.counter) == [1])

        // The served files, exactly.
        let served = try Set(FileManager.default.contentsOfDirectory(atPath: repository))
        #expect(
            served == [
                "1.root.json", "root.json", "timestamp.json", "1.snapshot.json", "2.snapshot.json", "3.snapshot.json",
                "1.targets.json", "2.targets.json", "1.commands.json", "2.commands.json", "targets",
            ])
        #expect(try FleetTest.bytes("\(repository)/root.json") == FleetTest.bytes("\(repository)/1.root.json"))

        let paths = ["policies/10-base.json", "policies/10-base.json.sig", "commands/\(device).json"]
        let root = "\(repository)/1.root.json"
        var swift = SwiftClient(root: try FleetTest.bytes(root))
        let first = try swift.update(repository, paths: paths).get()
        #expect(first.set.versions == ["root": 1, "timestamp": 3, "snapshot": 3, "targets": 2, "commands": 2])
        #expect(first.files["policies/10-base.json"] == Array(Self.base.utf8))
        let commands = try FleetCommandFile(try #require(first.files["commands/\(device).json"]))
        #expect(commands.device == device)
        #expect(commands.commands.map(\.kind) == [.lock])
        #expect(commands.commands.first?.reason == "lost")
        let verdicts = FleetCommandCheck(device: device).verdicts(
            commands, listedBy: "commands", signers: first.set.signers["commands"] ?? 0,
            wipeThreshold: first.set.root.wipeThreshold, taken: [:], now: Date())
        #expect(verdicts == [.accept(commands.commands[0])])

        let python = try PythonClient(root: root)
        let pythonFirst = try python.update(repository, paths: paths)
        #expect(pythonFirst.ok, "python-tuf: \(pythonFirst.error ?? "") \(pythonFirst.detail)")
        #expect(pythonFirst.trusted == first.set.versions)
        #expect(pythonFirst.targets == first.files.mapValues(FleetTest.sha256))

        // A second round: the policy changes, its signature goes, a second command.
        let changed = try FleetTest.policyDirectory(["10-base.json": Self.base + " ", "20-mail.json": "{}"])
        let second = try fleet.publish(policies: changed)
        #expect(second.added == ["policies/20-mail.json"])
        #expect(second.changed == ["policies/10-base.json"])
        #expect(second.removed == ["policies/10-base.json.sig"])
        #expect(Set(second.unsigned) == ["10-base.json", "20-mail.json"])
        _ = try fleet.issue(FleetCommandRequest(kind: .wipeApp, app: "com.example.mail", devices: [device]))
        let paths2 = ["policies/10-base.json", "policies/20-mail.json", "commands/\(device).json"]
        let next = try swift.update(repository, paths: paths2).get()
        #expect(next.set.versions == ["root": 1, "timestamp": 5, "snapshot": 5, "targets": 3, "commands": 3])
        #expect(next.set.target("policies/10-base.json.sig") == nil)
        let nextCommands = try FleetCommandFile(try #require(next.files["commands/\(device).json"]))
        #expect(nextCommands.commands.map(\.counter) == [1, 2])
        #expect(nextCommands.commands.last?.app == "com.example.mail")
        let pythonNext = try python.update(repository, paths: paths2)
        #expect(pythonNext.ok, "python-tuf: \(pythonNext.error ?? "") \(pythonNext.detail)")
        #expect(pythonNext.trusted == next.set.versions)
        #expect(pythonNext.targets == next.files.mapValues(FleetTest.sha256))

        // The same policies again change nothing.
        #expect(try fleet.publish(policies: changed).published == false)
    }

    @Test func workspaceLayoutAndKeyFiles() throws {
        let directory = try FleetTest.temporaryDirectory()
        let made = try FleetWorkspace.create(at: directory)
        #expect(made.keyFiles.map(\.role) == FleetRole.allCases)
        for (role, path) in made.keyFiles {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(path)")
            let text = String(decoding: try FleetTest.bytes(path), as: UTF8.self)
            #expect(text.hasPrefix("cordon-fleet-key-v1 \(role.rawValue) "))
            let file = try FleetKeyFile.read(path)
            #expect(path.hasSuffix("/keys/\(role.rawValue)-\(file.keyID.prefix(8)).key"))
            let pub = String(decoding: try FleetTest.bytes(String(path.dropLast(4)) + ".pub"), as: UTF8.self)
            #expect(pub.hasPrefix("cordon-fleet-public-key-v1 \(role.rawValue) \(file.keyID) "))
        }
        let ledger = try FleetWorkspace(opening: directory).ledger
        #expect(ledger.role(.timestamp).expirySeconds == 86_400)
        #expect(ledger.role(.root).expirySeconds == 365 * 86_400)
        #expect(ledger.role(.commands).expirySeconds == 30 * 86_400)
        #expect(ledger.wipeThreshold == 2)
        let root = try TUFRoot(FleetTest.bytes("\(directory)/repository/1.root.json"))
        #expect(root.wipeThreshold == 2)
        #expect(root.consistentSnapshot)
        // No temporary file is left behind.
        let all = try FileManager.default.subpathsOfDirectory(atPath: directory)
        #expect(all.filter { $0.hasSuffix(".tmp") }.isEmpty)
        // A second init is refused.
        #expect(throws: FleetAdminError.self) { try FleetWorkspace.create(at: directory) }
    }

    @Test func timestampResignKeepsClientsCurrent() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        var swift = SwiftClient(root: try FleetTest.bytes("\(fleet.repository)/1.root.json"))
        _ = try swift.update(fleet.repository, paths: []).get()
        let later = Date().addingTimeInterval(3_600)
        let result = try fleet.resignTimestamp(now: later)
        #expect(result.version == 2)
        #expect(result.renewed.isEmpty)
        let set = try swift.update(fleet.repository, paths: []).get().set
        #expect(set.versions["timestamp"] == 2)
        #expect(set.versions["snapshot"] == 1)
        // 25 days on: snapshot, targets and commands (30 days) are renewed too.
        let renewed = try fleet.resignTimestamp(now: Date().addingTimeInterval(25 * 86_400))
        #expect(Set(renewed.renewed) == [.commands, .targets, .snapshot])
    }

    /// Timestamps re-signed within one second still get distinct modification seconds: HTTP servers
    /// make ETags from that second and the size, and an equal ETag would be answered 304.
    @Test func everyTimestampGetsALaterModificationSecond() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        var seconds: [Int] = []
        for _ in 0..<3 {
            _ = try fleet.resignTimestamp()
            var status = stat()
            #expect(stat("\(fleet.repository)/timestamp.json", &status) == 0)
            seconds.append(Int(status.st_mtim.tv_sec))
        }
        #expect(seconds[0] < seconds[1] && seconds[1] < seconds[2], "\(seconds)")
    }
}
