import CordonKit
import Foundation

/// A real `cordond` process on temporary directories.
final class DaemonProcess: @unchecked Sendable {
    let root: TemporaryDirectory
    let process = Process()
    let logPath: String
    var socketPath: String { root.appending("run/agent.sock") }
    var runtimeDirectory: String { root.appending("run") }
    var databasePath: String { root.appending("data/cordon.sqlite") }
    var adminPolicyDirectory: String { root.appending("admin") }
    var userPolicyDirectory: String { root.appending("config/policy.d") }
    var trustDirectory: String { root.appending("trust") }

    /// Starts `cordond` with test defaults (insecure fast KDF, no idle lock) plus `arguments`.
    init(
        root: TemporaryDirectory? = nil, arguments: [String] = [], fastKDF: Bool = true,
        environment: [String: String] = [:]
    ) throws {
        self.root = try root ?? TemporaryDirectory()
        logPath = self.root.appending("cordond-\(UUID().uuidString.prefix(4)).log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = Binaries.cordond
        process.arguments =
            [
                "--runtime-dir", self.root.appending("run"), "--data-dir", self.root.appending("data"),
                "--config-dir", self.root.appending("config"), "--admin-policy-dir", self.root.appending("admin"),
                "--trust-dir", self.root.appending("trust"), "--idle-timeout", "0", "--log-level", "trace",
            ] + (fastKDF ? ["--insecure-fast-kdf"] : []) + arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "CORDON_INSECURE_FAST_KDF")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardError = log
        process.standardOutput = log
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits until the daemon answers on its socket.
    func waitUntilReady() async throws {
        try await eventually("cordond answers on \(socketPath)") {
            guard process.isRunning else { throw DaemonError.exited(log) }
            let client = try await CordonClient.connect(socketPath: socketPath)
            defer { Task { await client.close() } }
            _ = try await client.status()
            return true
        }
    }

    /// Starts and waits until ready.
    static func started(
        root: TemporaryDirectory? = nil, arguments: [String] = [], fastKDF: Bool = true,
        environment: [String: String] = [:]
    ) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(root: root, arguments: arguments, fastKDF: fastKDF, environment: environment)
        try await daemon.waitUntilReady()
        return daemon
    }

    /// A connected client.
    func client() async throws -> CordonClient {
        try await CordonClient.connect(socketPath: socketPath)
    }

    /// Sends `signal` and waits for the process to exit; returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) async throws -> Int32 {
        if process.isRunning { kill(pid, signal) }
        try await eventually("cordond exits") { !process.isRunning }
        return process.terminationStatus
    }

    /// The daemon's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Kills the daemon if it still runs and removes its directories (synchronous, for `defer`).
    func cleanUp() {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }
}

enum DaemonError: Error, CustomStringConvertible {
    case exited(String)
    var description: String {
        switch self {
        case .exited(let log): return "cordond exited early; log:\n\(log)"
        }
    }
}
