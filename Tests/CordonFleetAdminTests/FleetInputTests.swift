import CordonFleet
import CordonFleetAdmin
import Foundation
import Testing

/// Bad input gets a typed error that names the file or field, with a hint.
@Suite struct FleetInputTests {
    func error(_ body: () throws -> Void) -> FleetAdminError? {
        do {
            try body()
            return nil
        } catch let error as FleetAdminError {
            return error
        } catch {
            Issue.record("not a FleetAdminError: \(error)")
            return nil
        }
    }

    @Test func aPolicyFileWhoseNameIsNotPlainIsRefused() throws {
        var fleet = try FleetWorkspace.create(at: FleetTest.temporaryDirectory()).workspace
        for name in ["bad name.json", ".hidden.json", "-x.json", "naïve.json"] {
            let policies = try FleetTest.policyDirectory(["10-base.json": "{}", name: "{}"])
            let refused = try #require(error { _ = try fleet.publish(policies: policies) }, "\(name)")
            #expect(refused.kind == .policy)
            #expect(refused.message.contains(name), "\(refused.message)")
            #expect(refused.message.contains("not a plain file name"))
            #expect(!refused.hint.isEmpty)
        }
        let orphan = try FleetTest.policyDirectory(["10-base.json": "{}", "20-mail.json.sig": "x"])
        #expect(error { _ = try fleet.publish(policies: orphan) }?.message.contains("20-mail.json.sig") == true)
        let directoryEntry = try FleetTest.policyDirectory(["10-base.json": "{}"])
        try FileManager.default.createDirectory(
            atPath: "\(directoryEntry)/sub.json", withIntermediateDirectories: false)
        #expect(error { _ = try fleet.publish(policies: directoryEntry) }?.message.contains("sub.json") == true)
        let empty = try FleetTest.policyDirectory([:])
        #expect(error { _ = try fleet.publish(policies: empty) }?.kind == .policy)
        #expect(fleet.ledger.role(.targets).version == 1)
    }

    @Test func aBadDeviceIDIsRefused() throws {
        var fleet = try FleetWorkspace.create(at: FleetTest.temporaryDirectory()).workspace
        for id in ["laptop-1", String(repeating: "a", count: 63), String(repeating: "g", count: 64), ""] {
            let refused = try #require(
                error { _ = try fleet.issue(FleetCommandRequest(kind: .lock, devices: [id])) }, "\(id)")
            #expect(refused.kind == .usage)
            #expect(refused.message.contains("is not a device id"))
            #expect(refused.hint.contains("cordon-fleetd id"))
        }
        let list = try FleetTest.temporaryDirectory() + "/devices.txt"
        try Data("# laptops\n\(FleetTest.device("a"))\nnot-an-id\n".utf8).write(to: URL(fileURLWithPath: list))
        let refused = try #require(error { _ = try FleetCommandRequest.deviceIDs(file: list) })
        #expect(refused.message.contains("\(list):3:"))
    }

    /// A reason or app id with a line break would make a command file no machine can read: the
    /// admin is told before anything is signed.
    @Test func aReasonOrAppWithAControlCharacterIsRefused() throws {
        var fleet = try FleetWorkspace.create(at: FleetTest.temporaryDirectory()).workspace
        let device = FleetTest.device("a")
        let reason = try #require(
            error { _ = try fleet.issue(FleetCommandRequest(kind: .lock, devices: [device], reason: "lost\nlaptop")) })
        #expect(reason.kind == .usage)
        #expect(
            reason.message == "--reason holds a control character (U+A), which a machine's command file cannot carry")
        #expect(reason.hint == "give --reason on one line, without tabs")
        let app = try #require(
            error { _ = try fleet.issue(FleetCommandRequest(kind: .wipeApp, app: "com.ex\tmail", devices: [device])) })
        #expect(app.message.hasPrefix("--wipe-app holds a control character (U+9)"))
        #expect(fleet.ledger.devices[device] == nil)
    }

    @Test func aMissingKeyFileIsRefused() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let missing = "\(directory)/nowhere/root.key"
        let refused = try #require(error { _ = try fleet.rotate(.timestamp, rootKeys: [missing]) })
        #expect(refused.kind == .key)
        #expect(refused.message.contains(missing))
        #expect(refused.message.contains("does not exist"))
        // A missing online key: the timestamp cannot be re-signed, and the error names the file looked for.
        try FileManager.default.removeItem(atPath: FleetTest.keyFile(directory, .timestamp))
        let noTimestamp = try #require(error { _ = try fleet.resignTimestamp() })
        #expect(noTimestamp.kind == .key)
        #expect(noTimestamp.message.contains("keys/timestamp-"))
        #expect(noTimestamp.hint.contains("rotate"))
        // A rotation that could not re-sign (no snapshot key) writes no new key and changes nothing.
        try FileManager.default.removeItem(atPath: FleetTest.keyFile(directory, .snapshot))
        let before = try FileManager.default.contentsOfDirectory(atPath: "\(directory)/keys").sorted()
        let rootKey = try FleetTest.keyFile(directory, .root)
        let noSnapshot = try #require(error { _ = try fleet.rotate(.targets, rootKeys: [rootKey]) })
        #expect(noSnapshot.kind == .key)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(directory)/keys").sorted() == before)
        #expect(try FleetWorkspace(opening: directory).ledger.role(.root).version == 1)
    }

    @Test func aKeyFileOfTheWrongRoleIsRefused() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let timestampKey = try FleetTest.keyFile(directory, .timestamp)
        let asRoot = try #require(error { _ = try fleet.rotate(.snapshot, rootKeys: [timestampKey]) })
        #expect(asRoot.kind == .key)
        #expect(asRoot.message.contains("is a timestamp key, not a root key"))
        #expect(asRoot.message.contains(timestampKey))
        let devices = [FleetTest.device("a"), FleetTest.device("b")]
        let asCommand = try #require(
            error {
                _ = try fleet.issue(FleetCommandRequest(kind: .wipe, devices: devices), commandKeys: [timestampKey])
            })
        #expect(asCommand.message.contains("--command-key \(timestampKey) is a timestamp key, not a commands key"))
        // A root key of another repository.
        let other = try FleetTest.temporaryDirectory()
        _ = try FleetWorkspace.create(at: other)
        let foreign = try #require(
            error { _ = try fleet.rotate(.snapshot, rootKeys: [FleetTest.keyFile(other, .root)]) })
        #expect(foreign.message.contains("is not a root key of root v1"))
        // Not a key file at all, and a public key.
        let pub = String(try FleetTest.keyFile(directory, .root).dropLast(4)) + ".pub"
        #expect(error { _ = try fleet.rotate(.snapshot, rootKeys: [pub]) }?.message.contains("is a public key") == true)
        #expect(fleet.ledger.role(.root).version == 1)
    }
}
