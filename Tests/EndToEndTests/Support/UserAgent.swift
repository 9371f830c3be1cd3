import CordonProtocol
import Foundation
import Testing

/// A real cordond as it is deployed: run by an ordinary user (``TestUser``, `setpriv`) outside test
/// mode, with the real passcode KDF, its runtime, data and config directories the user's own and
/// its admin policy and trust directory root's (docs/THREAT-MODEL.md: every guarantee is tested
/// as the user Cordon runs as; root bypasses the very checks under test).
///
/// The test process is root, and the agent refuses every other uid: everything that talks to it
/// — the CLI, the apps, the attackers — runs as the user too (``asUser``).
final class UserAgent: @unchecked Sendable {
    /// The user: its uid and the `setpriv` prefix of every command run as it.
    static var uid: String { TestUser.uid }
    static var asUser: [String] { TestUser.asUser }
    /// Debian's interpreter (readable by the user, unlike a root pyenv).
    static let python = NobodyAgent.python
    /// The passcode: outside test mode, without a TPM, the stronger software-only rules apply.
    static let passcode = "Cordon-2468-test"

    /// The user's directory: the socket, database, settings and whatever the user writes.
    let home: TemporaryDirectory
    /// Root's: the admin policy (`admin/`), the trust directory (`trust/`) and root's binaries.
    let system: TemporaryDirectory
    /// The apps started as the user (``startNotes()``), killed by ``cleanUp()``.
    private var apps: [SpawnedCommand] = []
    /// The running cordond (a new one after ``restart()``).
    private(set) var process = Process()
    /// cordond's flags beyond the directories and logging (``init(policy:install:initialize:arguments:testMode:environment:prepareHome:)``).
    private let extraArguments: [String]
    /// cordond's environment beyond what the user's programs see (``environment(home:)``).
    private let extraEnvironment: [String: String]
    let logPath: String
    var socketPath: String { activatedSocket ?? home.appending("run/agent.sock") }
    /// Where `systemd-socket-activate` listens and starts cordond, if it does
    /// (``init(policy:install:initialize:arguments:testMode:environment:activatedSocket:prepareHome:)``).
    let activatedSocket: String?
    /// A program that runs cordond as its own image (`prlimit --nofile=…`), or nothing.
    let wrapper: [String]
    /// What the user's programs see (``environment(home:)``), with the socket this agent serves.
    var userEnvironment: [String: String] {
        Self.environment(home: home.path).merging(["CORDON_SOCKET": socketPath]) { $1 }
    }

    /// Installs `install` (a path under root's directory for each program copied there), writes
    /// `policy` (`$SYSTEM` standing for root's directory) as root's admin policy, lets
    /// `prepareHome` lay out the user's directory as the user might have left it, and starts
    /// cordond as the user; with `initialize`, initializes and unlocks it through the CLI run as
    /// the user. `arguments` are further cordond flags and `environment` further variables of its;
    /// `testMode` adds `--test-mode` and the fast KDF, for the few cases that need test mode's
    /// switches (say why where it is used). With `activatedSocket`, the real
    /// `systemd-socket-activate` (run as the user) listens there and starts cordond on the first
    /// connection, as systemd --user would. `wrapper` runs cordond through a program that execs it
    /// (`prlimit --nofile=64:64`). `environment` is added to cordond's (a display, the
    /// variables a prompt is placed by).
    init(
        policy: String, install: [String: String] = [:], initialize: Bool = true, arguments: [String] = [],
        testMode: Bool = false, environment: [String: String] = [:], activatedSocket: String? = nil,
        wrapper: [String] = [], prepareHome: (TemporaryDirectory) throws -> Void = { _ in }
    ) async throws {
        self.activatedSocket = activatedSocket
        self.wrapper = wrapper
        extraArguments = arguments + (testMode ? ["--test-mode", "--insecure-fast-kdf"] : [])
        extraEnvironment = environment
        home = try TemporaryDirectory()
        try prepareHome(home)
        system = try TemporaryDirectory()
        for directory in ["admin", "trust"] {
            try FileManager.default.createDirectory(
                atPath: system.appending(directory), withIntermediateDirectories: true)
        }
        for (name, source) in install {
            let path = system.appending(name)
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: source, toPath: path)
        }
        try policy.replacingOccurrences(of: "$SYSTEM", with: system.path)
            .write(toFile: system.appending("admin/10-apps.json"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: system.path)
        try await NobodyAgent.run(["/bin/chown", "-R", "\(Self.uid):\(TestUser.gid)", home.path])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        logPath = system.appending("cordond.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        do {
            try await start()
            if initialize {
                let initialized = try await cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
                try #require(initialized.status == 0, "init: \(initialized.stderr)")
                let unlocked = try await cli(["unlock", "--passcode-stdin"], input: Self.passcode + "\n")
                try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
            }
        } catch {
            cleanUp()
            throw error
        }
    }

    /// Starts cordond as the user on the directories and waits until it answers.
    private func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.asUser[0])
        // systemd-socket-activate closes the descriptor Foundation watches for the child's exit:
        // the launcher's wrapper (see ``Launcher``) keeps it open until cordond has exited.
        let launcher = activatedSocket.map {
            [Launcher.shell.path, "-c", Launcher.script, "/usr/bin/systemd-socket-activate", "-l", $0]
        }
        process.arguments = Array(Self.asUser.dropFirst()) + (launcher ?? []) + wrapper + daemonArguments
        process.environment = userEnvironment.merging(extraEnvironment) { $1 }
        let output = FileHandle(forWritingAtPath: logPath)
        output?.seekToEndOfFile()
        process.standardError = output
        process.standardOutput = output
        try process.run()
        self.process = process
        try await eventually("cordond answers the user") {
            try #require(process.isRunning, "cordond exited: \(log)")
            return try await cli(["status"]).status == 0
        }
    }

    /// cordond and its flags: the directories, logging and ``extraArguments``.
    private var daemonArguments: [String] {
        [
            Binaries.cordond.path, "--runtime-dir", home.appending("run"), "--data-dir", home.appending("data"),
            "--config-dir", home.appending("config"), "--admin-policy-dir", system.appending("admin"),
            "--trust-dir", system.appending("trust"), "--log-level", "debug", "--log-target", "stderr",
        ] + extraArguments
    }

    /// Starts a second cordond as the user, with the same directories, flags and environment, and
    /// waits (30 s at most) for it to exit: for a case where cordond must refuse to start on what
    /// root's inputs have become (the running one, if any, is left as it is).
    func startAgain() async throws -> CommandResult {
        try await runCommand(
            URL(fileURLWithPath: "/usr/bin/timeout"), ["30"] + Self.asUser + daemonArguments,
            environment: userEnvironment.merging(extraEnvironment) { $1 })
    }

    /// Kills cordond if it still runs (`SIGKILL`, as a crash would) and starts it again on the same
    /// directories; the container is then locked.
    func restart() async throws {
        stop()
        try await start()
    }

    /// Sends cordond `signal` and waits for it to exit; returns its exit status.
    @discardableResult
    func terminate(signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning { kill(daemonPID, signal) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// cordond's pid: the launcher wrapper's child when `systemd-socket-activate` started it
    /// (the wrapper's own pid before the first connection).
    var daemonPID: Int32 {
        let pid = process.processIdentifier
        guard activatedSocket != nil else { return pid }
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { Int32($0) }.first ?? pid
    }

    /// Kills cordond (`SIGKILL`) and waits for it; ``restart()`` starts it again.
    func stop() {
        if process.isRunning, daemonPID != process.processIdentifier { kill(daemonPID, SIGKILL) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What the user's programs see: no test-mode variable, the user's own runtime directory.
    static func environment(home: String) -> [String: String] {
        [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": home + "/run",
            "CORDON_SOCKET": home + "/run/agent.sock", "SWIFT_BACKTRACE": "enable=no",
        ]
    }

    /// Runs `cordon ARGUMENTS` as the user; `environment` is added to ``environment(home:)``.
    func cli(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws
        -> CommandResult
    {
        try await runCommand(
            URL(fileURLWithPath: Self.asUser[0]), Array(Self.asUser.dropFirst()) + [Binaries.cordon.path] + arguments,
            input: input, environment: userEnvironment.merging(environment) { $1 })
    }

    /// Runs an attack script as the user (`command` overrides the interpreter, e.g. a bound binary).
    func attack(
        _ body: String, _ arguments: [String] = [], command: [String]? = nil, environment: [String: String] = [:]
    ) async throws -> [String: Any] {
        // A copy of Debian's interpreter installed elsewhere finds its library through PYTHONHOME.
        try await AttackScript.run(
            body, [socketPath] + arguments, in: home, environment: ["PYTHONHOME": "/usr"].merging(environment) { $1 },
            command: command ?? Self.asUser + [Self.python])
    }

    /// Starts the notes example (a CordonKit app) as the user, writing to `notes.out` in the
    /// user's directory, and waits until it has registered; it is killed by ``cleanUp()``. Returns
    /// its pid and a reader of what it has said so far. `appId` is the id it registers (its
    /// output then goes to `<appId>.out` unless it is the notes app's own), `arguments` further
    /// flags of the example (`--export-dir`, `--share-with`).
    func startNotes(appId: String = "com.example.notes", arguments: [String] = []) async throws -> (
        pid: Int32, read: @Sendable () -> String
    ) {
        let (pid, read) = try startNotes(
            [
                "--app-id", appId, "--dir", home.appending("notes"), "--data-dir", home.appending("data"),
                "--interval-ms", "20",
            ] + arguments, output: appId == "com.example.notes" ? "notes" : appId)
        try await eventually("the notes app registered") { read().contains("registered as \(appId)") }
        return (pid, read)
    }

    /// Starts the notes example as the user with `arguments` (and `--socket`), writing to
    /// `OUTPUT.out` in the user's directory, without waiting; it is killed by ``cleanUp()``.
    /// Returns its pid and a reader of what it has said so far.
    func startNotes(_ arguments: [String], output name: String) throws -> (pid: Int32, read: @Sendable () -> String) {
        let output = home.appending("\(name).out")
        let command =
            Self.asUser + ["/bin/sh", "-c", "exec \"$0\" \"$@\" > \"\(output)\" 2>&1", Binaries.notes.path]
            + arguments + ["--socket", socketPath]
        let notes = try SpawnedCommand(
            path: command[0], arguments: Array(command.dropFirst()), environment: userEnvironment)
        apps.append(notes)
        let read: @Sendable () -> String = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        return (notes.pid, read)
    }

    /// Whether the app started with pid `pid` still runs (exited, it is a zombie until ``cleanUp()``
    /// reaps it).
    func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].dropFirst(2).hasPrefix("Z")
    }

    /// The registered apps, as `cordon apps --json` lists them.
    func apps() async throws -> [AppInfo] {
        let listed = try await cli(["apps", "--json"])
        try #require(listed.status == 0, "cordon apps: \(listed.stderr)")
        return try JSONDecoder().decode([AppInfo].self, from: Data(listed.stdout.utf8))
    }

    /// Makes `path` (and all below it) the user's, as if the user had written it.
    func give(_ path: String) async throws {
        try await NobodyAgent.run(["/bin/chown", "-R", "\(Self.uid):\(TestUser.gid)", path])
    }

    /// The agent's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func cleanUp() {
        for app in apps {
            kill(app.pid, SIGKILL)
            _ = app.finish(input: nil)
        }
        apps = []
        stop()
        home.remove()
        system.remove()
    }
}
