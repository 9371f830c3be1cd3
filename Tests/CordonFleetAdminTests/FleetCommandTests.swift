import CordonFleet
import CordonFleetAdmin
import CordonProtocol
import Foundation
import Testing

/// Commands: per-device counters, and the root's wipe threshold enforced by the tool and, on a
/// repository made by hand with one key, by `FleetCommandCheck`.
@Suite struct FleetCommandTests {
    @Test func eachDevicesCounterIncreasesByOnePerCommand() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let a = FleetTest.device("a")
        let b = FleetTest.device("b")
        #expect(try fleet.issue(FleetCommandRequest(kind: .lock, devices: [a])).counters.map(\.counter) == [1])
        let both = try fleet.issue(FleetCommandRequest(kind: .refresh, devices: [a, b, a.uppercased()]))
        #expect(both.counters.map(\.device) == [a, b])
        #expect(both.counters.map(\.counter) == [2, 1])
        #expect(try fleet.issue(FleetCommandRequest(kind: .lock, devices: [b])).counters.map(\.counter) == [2])
        let ledger = try FleetWorkspace(opening: directory).ledger
        #expect(ledger.devices[a]?.counter == 2)
        #expect(ledger.devices[b]?.counter == 2)
        #expect(ledger.devices[b]?.lastKind == "lock")

        var swift = SwiftClient(root: try FleetTest.bytes("\(fleet.repository)/1.root.json"))
        let got = try swift.update(fleet.repository, paths: ["commands/\(a).json", "commands/\(b).json"]).get()
        let fileA = try FleetCommandFile(try #require(got.files["commands/\(a).json"]))
        let fileB = try FleetCommandFile(try #require(got.files["commands/\(b).json"]))
        #expect(fileA.commands.map(\.counter) == [1, 2])
        #expect(fileB.commands.map(\.counter) == [1, 2])
        #expect(fileA.commands[1].machines == 2)

        // Expired commands leave the file; the counter goes on.
        let later = Date().addingTimeInterval(8 * 86_400)
        let next = try fleet.issue(FleetCommandRequest(kind: .lock, devices: [a]), now: later)
        #expect(next.counters.map(\.counter) == [3])
        let listed = try FleetCommandFile(FleetTest.bytes(servedCommandFile(directory, device: a)))
        #expect(listed.commands.map(\.counter) == [3])
    }

    @Test func aMultiDeviceWipeNeedsTheWipeThresholdOfCommandKeys() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let devices = [FleetTest.device("a"), FleetTest.device("b")]
        do {
            _ = try fleet.issue(FleetCommandRequest(kind: .wipe, devices: devices))
            Issue.record("a wipe of two machines with one command key was issued")
        } catch {
            #expect(error.kind == .threshold)
            #expect(error.message.contains("needs 2 distinct command keys"))
            #expect(error.hint.contains("--command-key"))
        }
        #expect(fleet.ledger.role(.commands).version == 1)
        #expect(fleet.ledger.devices.isEmpty)
        // One device is not a fleet-wide wipe: one key suffices.
        _ = try fleet.issue(FleetCommandRequest(kind: .wipeApp, app: "com.example.mail", devices: [devices[0]]))

        let other = try FleetTest.temporaryDirectory("admin2") + "/commands-2.key"
        let added = try fleet.addKey(.commands, out: other)
        #expect(added.written.map(\.path) == [other])
        let result = try fleet.issue(FleetCommandRequest(kind: .wipe, devices: devices), commandKeys: [other])
        #expect(result.signers.count == 2)
        // While that wipe is live, a command signed by one key is refused (a machine would refuse the wipe).
        #expect(throws: FleetAdminError.self) {
            try fleet.issue(FleetCommandRequest(kind: .lock, devices: [devices[0]]))
        }

        var swift = SwiftClient(root: try FleetTest.bytes("\(fleet.repository)/1.root.json"))
        let got = try swift.update(fleet.repository, paths: devices.map { "commands/\($0).json" }).get()
        #expect(got.set.signers["commands"] == 2)
        let file = try FleetCommandFile(try #require(got.files["commands/\(devices[1]).json"]))
        let verdicts = FleetCommandCheck(device: devices[1]).verdicts(
            file, listedBy: "commands", signers: 2, wipeThreshold: got.set.root.wipeThreshold, taken: [:], now: Date())
        #expect(verdicts == [.accept(file.commands[0])])
    }

    @Test func aHandMadeMultiDeviceWipeSignedByOneKeyIsRefusedByTheDevice() throws {
        let directory = try FleetTest.temporaryDirectory()
        let fleet = try FleetWorkspace.create(at: directory).workspace
        let repository = fleet.repository
        let devices = [FleetTest.device("a"), FleetTest.device("b")]
        // Bypass the tool: commands v2 listing a wipe of both, signed by the one command key.
        let now = Date()
        let wipe = FleetCommand(
            counter: 1, kind: .wipe, issued: now, expires: now.addingTimeInterval(86_400), machines: devices.count)
        let file = FleetCommandFile(device: devices[0], commands: [wipe])
        let key = { (role: FleetRole) throws -> TUFSigningKey in
            try FleetKeyFile.read(FleetTest.keyFile(directory, role)).key
        }
        let expires = now.addingTimeInterval(86_400)
        let commands = try TUFWriter.sign(
            TUFWriter.targets(
                version: 2, expires: expires, files: [FleetCommandFile.path(for: devices[0]): file.bytes]),
            with: [key(.commands)])
        let targets = try FleetTest.bytes("\(repository)/1.targets.json")
        let snapshot = try TUFWriter.sign(
            TUFWriter.snapshot(
                version: 2, expires: expires, roles: ["targets": (1, targets), "commands": (2, commands)]),
            with: [key(.snapshot)])
        let timestamp = try TUFWriter.sign(
            TUFWriter.timestamp(version: 2, expires: expires, snapshot: snapshot, snapshotVersion: 2),
            with: [key(.timestamp)])
        let target = "\(repository)/targets/commands/\(FleetTest.sha256(file.bytes)).\(devices[0]).json"
        try FileManager.default.createDirectory(
            atPath: "\(repository)/targets/commands", withIntermediateDirectories: true)
        for (path, bytes) in [
            (target, file.bytes), ("\(repository)/2.commands.json", commands),
            ("\(repository)/2.snapshot.json", snapshot), ("\(repository)/timestamp.json", timestamp),
        ] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }

        var swift = SwiftClient(root: try FleetTest.bytes("\(repository)/1.root.json"))
        let got = try swift.update(repository, paths: ["commands/\(devices[0]).json"]).get()
        #expect(got.set.signers["commands"] == 1)
        #expect(got.set.root.wipeThreshold == 2)
        let parsed = try FleetCommandFile(try #require(got.files["commands/\(devices[0]).json"]))
        let verdicts = FleetCommandCheck(device: devices[0]).verdicts(
            parsed, listedBy: "commands", signers: got.set.signers["commands"] ?? 0,
            wipeThreshold: got.set.root.wipeThreshold, taken: [:], now: Date())
        #expect(verdicts == [.refuse(parsed.commands[0], .wipeThreshold)])
    }

    /// The served command file of `device` as the workspace's current commands metadata lists it.
    func servedCommandFile(_ directory: String, device: String) throws -> String {
        let ledger = try FleetWorkspace(opening: directory).ledger
        let version = ledger.role(.commands).version
        let commands = try TUFTargets(
            FleetTest.bytes("\(directory)/repository/\(version).commands.json"), role: "commands")
        let file = try #require(commands.targets[FleetCommandFile.path(for: device)])
        return "\(directory)/repository/\(file.servedPath)"
    }
}
