import CordonFleet
import CordonFleetAdmin
import CordonProtocol
import Crypto
import Foundation
import Testing

/// Workspaces, policy directories, and the two clients (the Swift verifier and python-tuf's
/// ngclient) the tests run against what `cordon fleet` writes.
enum FleetTest {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("peers")

    /// A fresh temporary directory.
    static func temporaryDirectory(_ label: String = "fleet") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-\(label)-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A device id (SHA-256 of a name, as `cordon-fleetd id` prints the hash of a key).
    static func device(_ name: String) -> String { TUFHex.encode(SHA256.hash(data: Array(name.utf8))) }

    /// A policy directory holding `files` (name → text).
    static func policyDirectory(_ files: [String: String]) throws -> String {
        let directory = try temporaryDirectory("policies")
        for (name, text) in files {
            try Data(text.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
        }
        return directory
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func sha256(_ bytes: [UInt8]) -> String { TUFHex.encode(SHA256.hash(data: bytes)) }

    /// The workspace's key file of `role` (the first one in keys/).
    static func keyFile(_ workspace: String, _ role: FleetRole) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: "\(workspace)/keys").sorted()
        let name = try #require(names.first { $0.hasPrefix("\(role.rawValue)-") && $0.hasSuffix(".key") })
        return "\(workspace)/keys/\(name)"
    }
}

/// The Swift verifier as a device runs it, keeping its trusted metadata between refreshes.
struct SwiftClient {
    var root: [UInt8]
    var persisted: [String: [UInt8]] = [:]
    var verifiedAt: Date?

    init(root: [UInt8]) { self.root = root }

    /// A refresh from `repository`; on success the new metadata is kept and each of `paths` is
    /// downloaded and checked (path → bytes).
    mutating func update(_ repository: String, paths: [String]) -> Result<
        (set: TUFTrustedSet, files: [String: [UInt8]]), TUFError
    > {
        let trusted: TUFTrustedSet
        do {
            var set = try TUFTrustedSet(root: persisted["root.json"] ?? root)
            set.load(persisted: persisted, verifiedAt: verifiedAt)
            trusted = set
        } catch {
            return .failure(error)
        }
        var refresh = TUFRefresh(trusted: trusted, now: Date())
        var step = refresh.start()
        while case .fetch(let fetch) = step {
            if let data = FileManager.default.contents(atPath: "\(repository)/\(fetch.path)") {
                step = refresh.receive(.data(Array(data)))
            } else {
                step = refresh.receive(.notFound)
            }
        }
        guard case .finished(let outcome) = step else { fatalError("unreachable") }
        let set: TUFTrustedSet
        switch outcome {
        case .updated(let new), .unchanged(let new): set = new
        case .refused(let error): return .failure(error)
        }
        var files: [String: [UInt8]] = [:]
        for path in paths {
            guard let file = set.target(path) else { return .failure(TUFError(.notFound, role: "target", path)) }
            let bytes = (try? FleetTest.bytes("\(repository)/\(file.servedPath)")) ?? []
            do { try file.verify(bytes) } catch { return .failure(error) }
            files[path] = bytes
        }
        persisted = set.files
        verifiedAt = set.verifiedAt
        return .success((set, files))
    }
}

/// python-tuf's ngclient (`peers/ngclient_fetch.py`), with its metadata directory kept between runs.
struct PythonClient {
    var root: String
    var metadata: String

    init(root: String) throws {
        self.root = root
        metadata = try FleetTest.temporaryDirectory("ngclient")
    }

    struct Outcome {
        var ok: Bool
        var error: String?
        var detail: String
        var trusted: [String: Int]
        /// path → sha256
        var targets: [String: String]
    }

    func update(_ repository: String, paths: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", FleetTest.peers.appendingPathComponent("ngclient_fetch.py").path, repository, root, metadata]
            + paths
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FleetAdminError(
                .io, "ngclient_fetch.py failed: " + String(decoding: message, as: UTF8.self),
                hint: "python-tuf installed?")
        }
        let json = try JSONDecoder().decode(JSONValue.self, from: data)
        var trusted: [String: Int] = [:]
        if case .object(let members)? = json["trusted"] {
            for (role, version) in members { trusted[role] = version.intValue }
        }
        var targets: [String: String] = [:]
        if case .object(let members)? = json["targets"] {
            for (path, info) in members { targets[path] = info["sha256"]?.stringValue }
        }
        return Outcome(
            ok: json["ok"] == .bool(true), error: json["error"]?.stringValue, detail: json["detail"]?.stringValue ?? "",
            trusted: trusted, targets: targets)
    }
}
