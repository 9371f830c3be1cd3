import CordonKit
import CordonProtocol
import Foundation

/// A real `cordond` process on temporary directories.
final class DaemonProcess: @unchecked Sendable {
    let root: TemporaryDirectory
    let process = Process()
    let logPath: String
    /// A launcher that runs cordond on a socket it binds itself (socket activation).
    let launcher: Launcher?
    var socketPath: String { launcher?.socketPath ?? root.appending("run/agent.sock") }
    var runtimeDirectory: String { root.appending("run") }
    var databasePath: String { root.appending("data/cordon.sqlite") }
    var adminPolicyDirectory: String { root.appending("admin") }
    var userPolicyDirectory: String { root.appending("config/policy.d") }
    var trustDirectory: String { root.appending("trust") }

    /// The admin file that trusts unbound apps (`apps.unknown: trusted`), so that a test's apps get
    /// their keys without binding each one; attack tests pass `trustUnboundApps: false` and meet
    /// the real default (docs/THREAT-MODEL.md).
    static let trustUnboundFile = "00-test-trust-unbound.json"

    /// The admin file that keeps the short test passcodes (2468) valid where no TPM protects the key
    /// (`passcode.minLength: 4`, `allowSimple: true`, so the stronger software-only defaults do not
    /// apply); tests of those defaults pass `shortPasscodes: false`.
    static let shortPasscodesFile = "00-test-short-passcodes.json"

    /// Starts `cordond` with test defaults (insecure fast KDF, no idle lock, unbound apps trusted)
    /// plus `arguments`.
    init(
        root: TemporaryDirectory? = nil, arguments: [String] = [], fastKDF: Bool = true,
        environment: [String: String] = [:], launcher: Launcher? = nil, trustUnboundApps: Bool = true,
        shortPasscodes: Bool = true
    ) throws {
        self.root = try root ?? TemporaryDirectory()
        if trustUnboundApps {
            let admin = self.root.appending("admin")
            try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
            try #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#
                .write(toFile: admin + "/" + Self.trustUnboundFile, atomically: true, encoding: .utf8)
        }
        if shortPasscodes {
            let admin = self.root.appending("admin")
            try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
            try #"{"schema": "cordon.policy.v1", "passcode": {"minLength": 4, "allowSimple": true}}"#
                .write(toFile: admin + "/" + Self.shortPasscodesFile, atomically: true, encoding: .utf8)
        }
        self.launcher = launcher
        logPath = self.root.appending("cordond-\(UUID().uuidString.prefix(4)).log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = launcher.map { _ in Launcher.shell } ?? Binaries.cordond
        process.arguments =
            (launcher.map { $0.shellArguments + [Binaries.cordond.path] } ?? []) + [
                "--runtime-dir", self.root.appending("run"), "--data-dir", self.root.appending("data"),
                "--config-dir", self.root.appending("config"), "--admin-policy-dir", self.root.appending("admin"),
                "--trust-dir", self.root.appending("trust"), "--idle-timeout", "0", "--log-level", "trace",
                "--test-mode",
            ] + (fastKDF ? ["--insecure-fast-kdf"] : []) + arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "CORDON_INSECURE_FAST_KDF")
        // Never the machine's real logind or screen saver: tests that want a bus pass the flags.
        let nowhere = "unix:path=" + self.root.appending("no-bus")
        env["CORDON_SYSTEM_BUS_ADDRESS"] = nowhere
        env["CORDON_SESSION_BUS_ADDRESS"] = nowhere
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardError = log
        process.standardOutput = log
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The daemon's own pid: the launcher shell's child when there is a launcher.
    var daemonPID: Int32 {
        guard launcher != nil else { return pid }
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { Int32($0) }.first ?? pid
    }

    /// Waits until the daemon answers on its socket.
    /// A daemon that exits meanwhile fails at once with its log (not after the whole wait).
    func waitUntilReady() async throws {
        var exited = false
        var lastError = "no attempt"
        do {
            try await waitForAnswer(&exited, &lastError)
        } catch is EventuallyError {
            throw DaemonError.notReady(socketPath, lastError: lastError, log: String(log.suffix(4000)))
        }
        if exited { throw DaemonError.exited(log) }
    }

    private func waitForAnswer(_ exited: inout Bool, _ lastError: inout String) async throws {
        try await eventually("cordond answers on \(socketPath)") {
            guard process.isRunning else {
                exited = true
                return true
            }
            do {
                let client = try await CordonClient.connect(socketPath: socketPath)
                defer { Task { await client.close() } }
                _ = try await client.status()
                return true
            } catch {
                lastError = "\(error)"
                throw error
            }
        }
    }

    /// Starts and waits until ready.
    static func started(
        root: TemporaryDirectory? = nil, arguments: [String] = [], fastKDF: Bool = true,
        environment: [String: String] = [:], launcher: Launcher? = nil, trustUnboundApps: Bool = true,
        shortPasscodes: Bool = true
    ) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(
            root: root, arguments: arguments, fastKDF: fastKDF, environment: environment, launcher: launcher,
            trustUnboundApps: trustUnboundApps, shortPasscodes: shortPasscodes)
        do {
            try await daemon.waitUntilReady()
        } catch {
            // Nobody else holds it yet: never leave a daemon (and its inotify instance) behind.
            daemon.cleanUp()
            throw error
        }
        return daemon
    }

    /// A connected client.
    func client() async throws -> CordonClient {
        try await CordonClient.connect(socketPath: socketPath)
    }

    /// Sends `signal` and waits for the process to exit; returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) async throws -> Int32 {
        if process.isRunning { kill(daemonPID, signal) }
        try await eventually("cordond exits") { !process.isRunning }
        return process.terminationStatus
    }

    /// The daemon's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Kills the daemon if it still runs and removes its directories (synchronous, for `defer`).
    func cleanUp() {
        // A launcher's shell runs the daemon as its child: kill that first, by its pid.
        if launcher != nil, process.isRunning, daemonPID != pid { kill(daemonPID, SIGKILL) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }
}

/// A program that runs cordond for the test, e.g. `systemd-socket-activate -l PATH`.
struct Launcher: Sendable {
    let executable: URL
    /// Its arguments before cordond's path.
    let arguments: [String]
    /// The socket clients connect to.
    let socketPath: String

    /// A wrapper that runs the launcher as its child and exits with its status. Signals go to
    /// the child directly (the wrapper inherits the test runner's blocked signal mask, so it
    /// waits with a blocking `waitpid`, never for SIGCHLD).
    ///
    /// Foundation learns that a child exited when the descriptor it passes the child is closed;
    /// `systemd-socket-activate` closes every descriptor it does not pass on before it execs, so
    /// run directly, Foundation would block in `waitpid` on the daemon and reap no other child.
    /// The wrapper keeps that descriptor open until the daemon has exited.
    static let shell = URL(fileURLWithPath: "/usr/bin/python3")
    static let script = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"

    /// The shell's arguments before cordond's path.
    var shellArguments: [String] { ["-c", Self.script, executable.path] + arguments }

    /// `prlimit --nofile=SOFT:HARD`: cordond under these descriptor limits, on its own socket under `root`.
    static func prlimit(soft: Int, hard: Int, root: TemporaryDirectory) -> Launcher {
        Launcher(
            executable: URL(fileURLWithPath: "/usr/bin/prlimit"), arguments: ["--nofile=\(soft):\(hard)"],
            socketPath: root.appending("run/agent.sock"))
    }

    /// `systemd-socket-activate -l socketPath`: binds the socket and execs cordond on the first connection.
    static func socketActivate(_ socketPath: String) -> Launcher {
        Launcher(
            executable: URL(fileURLWithPath: "/usr/bin/systemd-socket-activate"), arguments: ["-l", socketPath],
            socketPath: socketPath)
    }
}

enum DaemonError: Error, CustomStringConvertible {
    case exited(String)
    case notReady(String, lastError: String, log: String)
    var description: String {
        switch self {
        case .exited(let log): return "cordond exited early; log:\n\(log)"
        case .notReady(let socket, let lastError, let log):
            return "cordond did not answer on \(socket) (last: \(lastError)); its log ends:\n\(log)"
        }
    }
}
