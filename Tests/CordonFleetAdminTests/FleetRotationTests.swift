import CordonFleet
import CordonFleetAdmin
import CordonProtocol
import Foundation
import Testing

/// Key rotation as clients that trusted root v1 see it: the Swift verifier and python-tuf's ngclient.
@Suite struct FleetRotationTests {
    @Test func timestampRotationIsFollowedByBothClients() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let rootKey = try FleetTest.keyFile(directory, .root)
        let oldTimestampKey = try FleetTest.keyFile(directory, .timestamp)
        let root = "\(fleet.repository)/1.root.json"
        var swift = SwiftClient(root: try FleetTest.bytes(root))
        let python = try PythonClient(root: root)
        _ = try swift.update(fleet.repository, paths: []).get()
        #expect(try python.update(fleet.repository, paths: []).ok)

        // Without the root key, rotation is refused and nothing changes.
        #expect(throws: FleetAdminError.self) { try fleet.rotate(.timestamp) }
        #expect(fleet.ledger.role(.root).version == 1)

        let result = try fleet.rotate(.timestamp, rootKeys: [rootKey])
        #expect(result.versions[.root] == 2)
        #expect(result.removed == [oldTimestampKey])
        #expect(!FileManager.default.fileExists(atPath: oldTimestampKey))
        let newKey = try FleetKeyFile.read(try #require(result.written.first?.path))
        #expect(newKey.role == .timestamp)

        let set = try swift.update(fleet.repository, paths: []).get().set
        #expect(set.versions["root"] == 2)
        #expect(set.versions["timestamp"] == 2)
        #expect(set.timestamp?.envelope.signatures.map(\.keyID) == [newKey.keyID])
        let pythonSet = try python.update(fleet.repository, paths: [])
        #expect(pythonSet.ok, "\(pythonSet.error ?? "") \(pythonSet.detail)")
        #expect(pythonSet.trusted["root"] == 2)
        #expect(pythonSet.trusted["timestamp"] == 2)

        // A fresh client that ships root v1 follows too.
        var fresh = SwiftClient(root: try FleetTest.bytes(root))
        #expect(try fresh.update(fleet.repository, paths: []).get().set.versions["root"] == 2)
    }

    @Test func rootRotationChainIsFollowedAndAnUnchainedRootRefused() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let repository = fleet.repository
        let firstRootKey = try FleetTest.keyFile(directory, .root)
        let root = "\(repository)/1.root.json"
        var swift = SwiftClient(root: try FleetTest.bytes(root))
        let python = try PythonClient(root: root)
        _ = try swift.update(repository, paths: []).get()
        #expect(try python.update(repository, paths: []).ok)

        let second = try fleet.rotate(.root, rootKeys: [firstRootKey])
        let secondRootKey = try #require(second.written.first?.path)
        // v3 needs v2's key: the first root key is no longer one.
        #expect(throws: FleetAdminError.self) { try fleet.rotate(.root, rootKeys: [firstRootKey]) }
        let third = try fleet.rotate(.root, rootKeys: [secondRootKey])
        #expect(third.versions[.root] == 3)
        let thirdRootKey = try FleetKeyFile.read(try #require(third.written.first?.path))

        let set = try swift.update(repository, paths: []).get().set
        #expect(set.versions["root"] == 3)
        #expect(set.root.envelope.signatures.count == 2)
        let pythonSet = try python.update(repository, paths: [])
        #expect(pythonSet.ok, "\(pythonSet.error ?? "") \(pythonSet.detail)")
        #expect(pythonSet.trusted["root"] == 3)

        // A root v4 signed only by a new key (not by v3's) is refused by both.
        let intruder = TUFSigningKey()
        let forged = try forgedRoot(directory, version: 4, newRoot: intruder)
        try Data(forged).write(to: URL(fileURLWithPath: "\(repository)/4.root.json"))
        switch swift.update(repository, paths: []) {
        case .success(let result): Issue.record("accepted \(result.set.versions)")
        case .failure(let error):
            #expect(error.kind == .threshold)
            #expect(error.role == "root")
        }
        let refused = try python.update(repository, paths: [])
        #expect(!refused.ok)
        #expect(refused.error == "UnsignedMetadataError")
        #expect(refused.trusted["root"] == 3)
        _ = thirdRootKey
    }

    @Test func commandsRotationRedelegates() throws {
        let directory = try FleetTest.temporaryDirectory()
        var fleet = try FleetWorkspace.create(at: directory).workspace
        let device = FleetTest.device("laptop")
        _ = try fleet.issue(FleetCommandRequest(kind: .lock, devices: [device]))
        var swift = SwiftClient(root: try FleetTest.bytes("\(fleet.repository)/1.root.json"))
        _ = try swift.update(fleet.repository, paths: ["commands/\(device).json"]).get()
        let result = try fleet.rotate(.commands)
        #expect(result.versions[.root] == 1)
        let set = try swift.update(fleet.repository, paths: ["commands/\(device).json"]).get().set
        let newKey = try FleetKeyFile.read(try #require(result.written.first?.path))
        #expect(set.targets["commands"]?.envelope.signatures.map(\.keyID) == [newKey.keyID])
        #expect(set.targets["targets"]?.delegationKeys.keys.sorted() == [newKey.keyID])
    }

    /// A root of `version` listing only `newRoot` for root, signed only by it.
    func forgedRoot(_ directory: String, version: Int, newRoot: TUFSigningKey) throws -> [UInt8] {
        let ledger = try FleetWorkspace(opening: directory).ledger
        var keys: [TUFKey] = [newRoot.publicKey]
        var roles: [String: TUFRoleKeys] = ["root": TUFRoleKeys(keyIDs: [newRoot.publicKey.id], threshold: 1)]
        for role in [FleetRole.timestamp, .snapshot, .targets] {
            let state = ledger.role(role)
            roles[role.rawValue] = TUFRoleKeys(keyIDs: state.keyIDs, threshold: state.threshold)
            for id in state.keyIDs {
                keys.append(TUFKey(id: id, ed25519: try #require(TUFHex.decode(ledger.keys[id]?.publicKey ?? ""))))
            }
        }
        let signed = TUFWriter.root(
            version: version, expires: Date().addingTimeInterval(86_400), keys: keys, roles: roles, wipeThreshold: 2)
        return try TUFWriter.sign(signed, with: [newRoot])
    }
}
