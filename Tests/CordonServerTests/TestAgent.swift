import CordonKit
import CordonLifecycle
import CordonLocking
import CordonPolicy
import CordonProtocol
import CordonServer
import Foundation
import Logging
import Testing

/// An agent running in-process on a socket in its own temporary directory.
///
/// Use `withTestAgent`, which starts it, hands it to the test and always stops it and removes
/// the directory afterwards, even when the test throws.
final class TestAgent: Sendable {
    let server: AgentServer
    let directory: String
    let logs: LogCapture
    private let stopped = Locked(false)

    var socketPath: String { server.socketPath }
    var paths: CordonPaths { server.configuration.paths }
    var configuration: AgentConfiguration { server.configuration }

    private init(server: AgentServer, directory: String, logs: LogCapture) {
        self.server = server
        self.directory = directory
        self.logs = logs
    }

    /// Creates a fresh temporary directory, the configuration for it, and starts an agent.
    /// With `policies`, the agent reads admin files from `<directory>/admin` (and user files from
    /// its config directory, keys from `<directory>/trust`).
    static func start(
        settings: PolicySettingValues, backoff: Backoff, limits: ConnectionLimits, policies: Bool = false,
        trustUnboundApps: Bool = true, shortPasscodes: Bool = true,
        configure: (inout AgentConfiguration) -> Void = { _ in },
        clock: (@Sendable () -> Double)? = nil
    ) async throws -> TestAgent {
        let directory = try makeTemporaryDirectory()
        let paths = CordonPaths(
            runtimeDirectory: directory + "/run", dataDirectory: directory + "/data",
            configDirectory: directory + "/config")
        // Created here, each with an explicit mode, so no directory depends on the process umask.
        for path in [paths.dataDirectory, paths.configDirectory] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        let directories =
            policies
            ? PolicyDirectories(
                admin: directory + "/admin", user: paths.configDirectory + "/policy.d", trust: directory + "/trust")
            : nil
        var configuration = AgentConfiguration(
            paths: paths, settingsOverlay: settings, backoff: backoff, limits: limits, insecureFastKDF: true,
            allowedUID: getuid(),
            policyDirectories: directories)
        // A test's apps get their keys without binding each one; tests of the default pass false.
        configuration.trustUnboundApps = trustUnboundApps
        // The tests' short passcodes (2468) without a TPM; tests of the stronger defaults pass false.
        configuration.softwareOnlyPasscodeDefaults = !shortPasscodes
        configure(&configuration)
        let logs = LogCapture()
        do {
            let logger = logs.logger(label: "cordon.test")
            let server =
                try clock.map { try AgentServer(configuration: configuration, logger: logger, clock: $0) }
                ?? AgentServer(configuration: configuration, logger: logger)
            let agent = TestAgent(server: server, directory: directory, logs: logs)
            do {
                try await server.start()
            } catch {
                try? await agent.stop()
                throw error
            }
            return agent
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Stops the agent (once; later calls do nothing).
    func stop() async throws {
        let first = stopped.withLock { value -> Bool in
            defer { value = true }
            return !value
        }
        guard first else { return }
        try await server.stop()
    }

    /// A new `CordonClient` on this agent's socket.
    func client() async throws -> CordonClient {
        try await CordonClient.connect(socketPath: socketPath)
    }

    /// Registers `appId` with this agent.
    func app(_ appId: String) async throws -> CordonApp {
        try await CordonApp.connect(appId: appId, socketPath: socketPath)
    }

    /// A raw Unix-socket connection to this agent.
    func raw() throws -> RawSocket {
        try RawSocket(path: socketPath)
    }

    /// A logger writing to this agent's log capture, for extra servers on the same paths.
    func logger(label: String) -> Logger {
        logs.logger(label: label)
    }

    private static func makeTemporaryDirectory() throws -> String {
        var base = FileManager.default.temporaryDirectory.path
        // Keep `<base>/cordon-XXXXXXXX/run/agent.sock` well under the 108-byte sun_path.
        if base.utf8.count > 60 { base = "/tmp" }
        let name = "cordon-" + UUID().uuidString.prefix(8).lowercased()
        let path = (base.hasSuffix("/") ? base : base + "/") + name
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }
}

/// Runs `body` against a freshly started agent, then stops it and removes its directory.
func withTestAgent<R>(
    settings: PolicySettingValues = PolicySettingValues(),
    backoff: Backoff = Backoff(),
    limits: ConnectionLimits = .standard,
    policies: Bool = false,
    trustUnboundApps: Bool = true,
    shortPasscodes: Bool = true,
    configure: (inout AgentConfiguration) -> Void = { _ in },
    clock: (@Sendable () -> Double)? = nil,
    _ body: (TestAgent) async throws -> R
) async throws -> R {
    let agent = try await TestAgent.start(
        settings: settings, backoff: backoff, limits: limits, policies: policies, trustUnboundApps: trustUnboundApps,
        shortPasscodes: shortPasscodes, configure: configure, clock: clock)
    let result: R
    do {
        result = try await body(agent)
    } catch {
        try? await agent.stop()
        try? FileManager.default.removeItem(atPath: agent.directory)
        throw error
    }
    try await agent.stop()
    try? FileManager.default.removeItem(atPath: agent.directory)
    return result
}

/// Thrown by `eventually` when its condition never became true.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` every few milliseconds until it is true; records an issue and throws
/// after `timeout`. Never used to wait for a fixed delay, only for a condition.
func eventually(
    timeout: Duration = .seconds(60),
    _ what: String = "a condition",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        if try await condition() { return }
        if ContinuousClock.now >= deadline {
            Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
            throw TimedOut(what: what)
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Collects the agent's log messages (notice and above by default) so a test can wait for one.
final class LogCapture: Sendable {
    private let entries = Locked<[String]>([])
    let level: Logger.Level

    init(level: Logger.Level = .notice) {
        self.level = level
    }

    /// A logger writing into this capture.
    func logger(label: String) -> Logger {
        let capture = self
        return Logger(label: label) { _ in CaptureHandler(capture: capture, logLevel: capture.level) }
    }

    /// Every captured message so far.
    var messages: [String] { entries.withLock { $0 } }

    /// Whether a captured message contains `text`.
    func contains(_ text: String) -> Bool {
        entries.withLock { $0.contains { $0.contains(text) } }
    }

    /// How many captured messages contain `text`.
    func count(_ text: String) -> Int {
        entries.withLock { $0.filter { $0.contains(text) }.count }
    }

    fileprivate func append(_ message: String) {
        entries.withLock { $0.append(message) }
    }
}

private struct CaptureHandler: LogHandler {
    let capture: LogCapture
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        capture.append("[\(event.level)] \(event.message)")
    }
}

extension PolicySettingValues {
    /// The settings `change` sets (as a test-mode cordond's flags would).
    static func with(_ change: (inout PolicySettingValues) -> Void) -> PolicySettingValues {
        var settings = PolicySettingValues()
        change(&settings)
        return settings
    }
}
