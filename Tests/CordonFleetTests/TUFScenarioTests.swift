import CordonProtocol
import Crypto
import Foundation
import Testing

@testable import CordonFleet

/// The verifier against repositories python-tuf (the reference implementation) made, step by step:
/// every valid repository accepted, every attack of the specification refused with the kind the
/// generator names, and python-tuf's own client agreeing on each step (`peers/tuf_scenarios.py`).
@Suite struct TUFScenarioTests {
    @Test(arguments: TUFScenarios.names)
    func scenario(_ name: String) throws {
        let directory = try TUFScenarios.directory.appendingPathComponent(name)
        let expect = try TUFScenarios.json(directory.appendingPathComponent("expect.json"))
        let steps = try #require(expect["steps"]?.arrayValue)
        let rootBytes = try TUFScenarios.bytes(directory.appendingPathComponent("trusted/root.json"))
        var persisted: [String: [UInt8]] = [:]
        var verifiedAt: Date?
        for (index, step) in steps.enumerated() {
            let remote = directory.appendingPathComponent(String(format: "steps/%02d/remote", index + 1))
            var trusted = try TUFTrustedSet(root: persisted["root.json"] ?? rootBytes)
            trusted.load(persisted: persisted, verifiedAt: verifiedAt)
            let label = "\(name) step \(index + 1)"
            // An accepted step downloads the targets it lists; a refused one every path the client would fetch.
            let listed: [String] = if case .object(let targets)? = step["targets"] { Array(targets.keys) } else { [] }
            let paths =
                step["outcome"]?.stringValue == "accept"
                ? listed : step["paths"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let result = TUFScenarios.update(trusted, from: remote, downloading: paths)
            switch (step["outcome"]?.stringValue, result) {
            case ("accept", .success(let set)):
                persisted = set.files
                verifiedAt = set.verifiedAt
                if case .object(let members)? = step["trusted"] {
                    for (role, version) in members {
                        #expect(set.versions[role] == version.intValue, "\(label): \(role) version")
                    }
                }
                if case .object(let targets)? = step["targets"] {
                    for (path, info) in targets {
                        let file = try #require(set.target(path), "\(label): \(path) not found")
                        let bytes = try TUFScenarios.bytes(remote.appendingPathComponent(file.servedPath))
                        #expect(
                            TUFHex.encode(SHA256.hash(data: bytes)) == info["sha256"]?.stringValue, "\(label): \(path)")
                        #expect(bytes.count == info["length"]?.intValue, "\(label): \(path) length")
                    }
                    #expect(Set(set.allTargets.keys) == Set(targets.keys), "\(label): the targets listed")
                }
            case ("refuse", .failure(let error)):
                #expect(error.kind.rawValue == step["error"]?.stringValue, "\(label): \(error)")
                #expect(error.role == step["role"]?.stringValue, "\(label): \(error)")
            case ("refuse", .success(let set)):
                Issue.record("\(label): accepted (\(set.versions)), expected \(step["error"]?.stringValue ?? "?")")
            case (_, .failure(let error)):
                Issue.record("\(label): refused \(error), expected acceptance")
            default:
                Issue.record("\(label): bad expect.json")
            }
        }
    }

    /// Every scenario the generator writes is run (a new one is not silently skipped).
    @Test func theGeneratedScenariosAreTheOnesRun() throws {
        let made = try FileManager.default.contentsOfDirectory(atPath: TUFScenarios.directory.path)
        #expect(Set(made) == Set(TUFScenarios.names))
    }

    /// The generator's oracle (python-tuf's ngclient) agreed with every intended outcome.
    @Test(arguments: TUFScenarios.names)
    func pythonTUFAgrees(_ name: String) throws {
        let expect = try TUFScenarios.json(TUFScenarios.directory.appendingPathComponent("\(name)/expect.json"))
        for step in try #require(expect["steps"]?.arrayValue) {
            let oracle = step["oracle"]?.stringValue
            if step["outcome"]?.stringValue == "accept" {
                #expect(oracle == "ok", "\(name): python-tuf said \(oracle ?? "nothing")")
            } else {
                #expect(oracle != "ok" && oracle != nil, "\(name): python-tuf accepted")
            }
        }
    }
}
