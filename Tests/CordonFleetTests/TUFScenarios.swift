import CordonProtocol
import Foundation

@testable import CordonFleet

/// The python-tuf scenarios, made once per test process into a temporary directory.
enum TUFScenarios {
    /// Every scenario `peers/tuf_scenarios.py` writes.
    static let names = [
        "valid", "valid-hashes-lengths", "policy-update", "command-issued", "freeze-expired-timestamp",
        "rollback-timestamp", "rollback-snapshot", "rollback-targets", "mix-and-match", "endless-target",
        "endless-snapshot", "wrong-target-hash", "untrusted-key-targets", "untrusted-key-commands",
        "threshold-targets", "duplicate-signature", "root-rotation", "root-rotation-skip", "root-version-mismatch",
        "root-not-signed-by-old", "root-expired", "fast-forward-recovery", "expired-snapshot", "expired-targets",
        "missing-snapshot",
    ]

    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("peers")

    private static let made: Result<URL, any Error> = Result {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-tuf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", peers.appendingPathComponent("tuf_scenarios.py").path, out.path]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ScenarioError(message: "tuf_scenarios.py failed: " + String(decoding: message, as: UTF8.self))
        }
        return out
    }

    /// Where the scenarios are.
    static var directory: URL { get throws { try made.get() } }

    struct ScenarioError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

    static func json(_ url: URL) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: url))
    }

    /// A refresh, then every path in `paths` downloaded and checked against the target the metadata names.
    static func update(_ trusted: TUFTrustedSet, from remote: URL, downloading paths: [String]) -> Result<
        TUFTrustedSet, TUFError
    > {
        let set: TUFTrustedSet
        switch refresh(trusted, from: remote) {
        case .updated(let new), .unchanged(let new): set = new
        case .refused(let error): return .failure(error)
        }
        for path in paths {
            guard let file = set.target(path) else { return .failure(TUFError(.notFound, role: "target", path)) }
            let bytes = (try? Self.bytes(remote.appendingPathComponent(file.servedPath))) ?? []
            do { try file.verify(bytes) } catch { return .failure(error) }
        }
        return .success(set)
    }

    /// Runs a refresh against the files under `remote`, as a server would serve them.
    static func refresh(_ trusted: TUFTrustedSet, from remote: URL, now: Date = Date()) -> TUFRefresh.Outcome {
        var refresh = TUFRefresh(trusted: trusted, now: now)
        var step = refresh.start()
        while case .fetch(let fetch) = step {
            let url = remote.appendingPathComponent(fetch.path)
            if let data = FileManager.default.contents(atPath: url.path) {
                step = refresh.receive(.data(Array(data)))
            } else {
                step = refresh.receive(.notFound)
            }
        }
        guard case .finished(let outcome) = step else { fatalError("unreachable") }
        return outcome
    }
}
