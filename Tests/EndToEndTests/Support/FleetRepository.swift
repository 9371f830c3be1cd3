import Foundation

/// A live TUF repository made and changed by python-tuf (`Tests/CordonFleetTests/peers/fleet_repo.py`):
/// what an admin publishes, as the reference implementation writes it.
final class FleetRepository: @unchecked Sendable {
    let directory: TemporaryDirectory
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("CordonFleetTests/peers/fleet_repo.py").path

    /// What the server serves.
    var served: String { directory.appending("repo") }
    /// The root a machine ships with.
    var shippedRoot: String { directory.appending("root.json") }

    init() async throws {
        directory = try TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try await run(["init", directory.path])
    }

    /// Publishes `files` (name → contents) as the repository's policy files, replacing the list.
    func publish(_ files: [String: String]) async throws {
        var arguments = ["publish", directory.path]
        for (name, contents) in files.sorted(by: { $0.key < $1.key }) {
            let path = directory.appending("source-\(name)")
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
            arguments.append("\(name)=\(path)")
        }
        try await run(arguments)
    }

    /// Issues a command to `device` (`lock`, `wipeApp`, `wipe`, `refresh`).
    func command(
        _ device: String, _ kind: String, app: String? = nil, expiresIn: Int? = nil, counter: Int? = nil,
        devices: [String]? = nil, bothKeys: Bool = false, reason: String? = nil
    ) async throws {
        var arguments = ["command", directory.path, device, kind]
        if let reason { arguments += ["--reason", reason] }
        if let app { arguments += ["--app", app] }
        if let expiresIn { arguments += ["--expires-in", "\(expiresIn)"] }
        if let counter { arguments += ["--counter", "\(counter)"] }
        if let devices { arguments += ["--devices", devices.joined(separator: ",")] }
        if bothKeys { arguments.append("--both-keys") }
        try await run(arguments)
    }

    /// Re-signs the timestamp (expiring in `expiresIn` seconds).
    func timestamp(expiresIn: Int? = nil) async throws {
        try await run(["timestamp", directory.path] + (expiresIn.map { ["--expires-in", "\($0)"] } ?? []))
    }

    /// Makes the server misbehave: `expired-timestamp`, `rollback-timestamp`, `long-target`, `foreign-key`.
    func attack(_ name: String) async throws { try await run(["attack", directory.path, name]) }

    private func run(_ arguments: [String]) async throws {
        let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.script] + arguments)
        guard result.status == 0 else { throw EventuallyError(what: "fleet_repo.py \(arguments[0]): \(result.stderr)") }
    }
}

/// `cordon-fleetd` run as root, as systemd runs it, on temporary directories.
final class FleetdProcess: @unchecked Sendable {
    let directory: TemporaryDirectory
    let policyDirectory: String
    private var process: Process?

    var stateDirectory: String { directory.appending("state") }
    /// Where fleetd hands commands and status to the agents (its own unless given).
    var fleetDirectory: String { fleetDirectoryOverride ?? directory.appending("fleet") }
    var fleetDirectoryOverride: String?
    var configPath: String { directory.appending("fleet.json") }
    var logPath: String { directory.appending("fleetd.log") }

    /// Writes fleet.json for `repository` (served by `nginx`) with `interval` seconds between polls,
    /// serving metrics on 127.0.0.1:`metricsPort` if given.
    convenience init(
        repository: FleetRepository, nginx: NginxServer, policyDirectory: String, interval: Int = 2,
        metricsPort: Int? = nil
    ) throws {
        try self.init(
            shippedRoot: repository.shippedRoot, nginx: nginx, policyDirectory: policyDirectory, interval: interval,
            metricsPort: metricsPort)
    }

    /// Writes fleet.json for the repository `nginx` serves, trusting `shippedRoot`.
    init(
        shippedRoot: String, nginx: NginxServer, policyDirectory: String, interval: Int = 2, metricsPort: Int? = nil
    ) throws {
        directory = try TemporaryDirectory()
        self.policyDirectory = policyDirectory
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let metrics = metricsPort.map { #", "metrics": {"listen": "127.0.0.1:\#($0)"}"# } ?? ""
        let settings = """
            {"repository": "\(nginx.base)", "caFile": "\(nginx.pki.caCertificate)", "intervalSeconds": \(interval),
             "reportURL": "\(nginx.base)reports/", "trustedRoot": "\(shippedRoot)"\(metrics)}
            """
        try settings.write(toFile: configPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    }

    /// Adds `/push` to fleet.json: the NATS servers fleetd listens on for the doorbell (a test's
    /// short reconnect window: the machine that starts offline joins within half a second).
    func addPush(servers: [String]) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: configPath))
        guard var settings = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EventuallyError(what: "fleet.json is not an object")
        }
        settings["push"] = ["servers": servers, "reconnectWindowSeconds": 0.5] as [String: Any]
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: configPath))
    }

    /// The machine's NATS user (`cordon-fleetd id --verbose`).
    func nkey() async throws -> String {
        let result = try await id(["--verbose"])
        guard let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("NATS user (nkey): ") })
        else {
            throw EventuallyError(what: "cordon-fleetd id --verbose names no NKey: \(result.stdout)")
        }
        return String(line.dropFirst("NATS user (nkey): ".count))
    }

    /// The TPM fleetd seals its device key to (`--tpm-tcti`), if any.
    var tcti: String?

    private var locations: [String] {
        ["--state-dir", stateDirectory] + (tcti.map { ["--tpm-tcti", $0] } ?? [])
    }

    /// `cordon-fleetd id` with `arguments`, as it ran.
    func id(_ arguments: [String] = []) async throws -> CommandResult {
        try await runCommand(Binaries.fleetd, ["id"] + locations + arguments)
    }

    private var runArguments: [String] {
        ["run", "--config", configPath, "--fleet-dir", fleetDirectory, "--policy-dir", policyDirectory] + locations
    }

    /// The device id (`cordon-fleetd id`).
    func deviceID() async throws -> String {
        let result = try await runCommand(Binaries.fleetd, ["id"] + locations)
        guard result.status == 0 else { throw EventuallyError(what: "cordon-fleetd id: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One poll (`run --once`); `crashAt` stops it there as a kill -9 would (`FleetdCrashPoint`).
    func pollOnce(crashAt: String? = nil) async throws -> CommandResult {
        try await runCommand(
            Binaries.fleetd, runArguments + ["--once"],
            environment: crashAt.map { ["CORDON_FLEETD_CRASH_AT": $0] } ?? [:])
    }

    /// Starts the service.
    func start() throws {
        let process = Process()
        process.executableURL = Binaries.fleetd
        process.arguments = runArguments
        let output = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
    }

    /// Stops it with SIGKILL (a crash) or SIGTERM.
    func stop(kill: Bool = false) {
        guard let process, process.isRunning else { return }
        if kill { Foundation.kill(process.processIdentifier, SIGKILL) } else { process.terminate() }
        process.waitUntilExit()
    }

    var isRunning: Bool { process?.isRunning ?? false }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The audit log's records.
    var audit: [[String: String]] {
        let text = (try? String(contentsOfFile: stateDirectory + "/audit.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONDecoder().decode([String: String].self, from: Data($0.utf8))
        }
    }

    /// The command files handed to the agents, by name.
    var handedCommands: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fleetDirectory + "/commands")) ?? []).sorted()
    }

    func cleanUp() {
        stop()
        directory.remove()
    }
}
