import Foundation
import Testing

/// A real cordond running as uid 65534, with a Flatpak "system installation" owned by root: the
/// setting of the sandbox tests, where root's files are the system's and the attacker — an
/// ordinary process of the same user — owns only what it made (docs/THREAT-MODEL.md, "Sandboxed
/// apps").
struct NobodyAgent {
    static let uid = "65534"
    /// `setpriv` as the user: the prefix of every attacker's command.
    static let asUser = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]
    /// The interpreter the tests run (Debian's, root's: readable by the user, unlike a root pyenv).
    static let python = "/usr/bin/python3.11"
    /// The Flatpak app of the tests and where its installation deploys it.
    static let flatpakId = "org.example.Notes"

    let daemon: DaemonProcess
    /// The root-owned installation (`--flatpak-installation`).
    let installation: TemporaryDirectory
    /// `<installation>/app/<id>/x86_64/stable/<commit>/files`: `/app` inside the sandbox.
    let deployment: String

    /// Installs the app (Python as `/app/bin/python3`), writes `policy` as the admin policy, and
    /// starts cordond as the user, initialised and unlocked.
    static func start(policy: String) async throws -> NobodyAgent {
        let installation = try TemporaryDirectory()
        let deployment = installation.appending("app/\(flatpakId)/x86_64/stable/4f1c2a/files")
        try FileManager.default.createDirectory(atPath: deployment + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: python, toPath: deployment + "/bin/python3")
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try policy.write(toFile: root.appending("admin/10-apps.json"), atomically: true, encoding: .utf8)
        try writeInfo(appPath: deployment, to: root.appending("flatpak-info"))
        try await run(["/bin/chown", "-R", "\(uid):\(uid)", root.path])
        let launcher = Launcher(
            executable: URL(fileURLWithPath: asUser[0]), arguments: Array(asUser.dropFirst()),
            socketPath: root.appending("run/agent.sock"))
        let daemon = try DaemonProcess(
            root: root, arguments: ["--flatpak-installation", installation.path], launcher: launcher,
            trustUnboundApps: false)
        let agent = NobodyAgent(daemon: daemon, installation: installation, deployment: deployment)
        do {
            try await eventually("cordond answers the user") {
                guard daemon.process.isRunning else { throw DaemonError.exited(daemon.log) }
                let probe = try await runCommand(
                    URL(fileURLWithPath: asUser[0]),
                    Array(asUser.dropFirst()) + [
                        python, "-c",
                        "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])",
                        daemon.socketPath,
                    ])
                return probe.status == 0
            }
            let setup = try await agent.attack(
                """
                s = connect(sys.argv[1])
                init = error(call(s, "io.cordon.Agent.Initialize", {"passcode": "Cordon-2468-test"}))
                unlock = error(call(s, "io.cordon.Agent.Unlock", {"passcode": "Cordon-2468-test"}))
                print(json.dumps({"init": init, "unlock": unlock}))
                """, command: asUser + [python])
            try #require(setup["init"] is NSNull && setup["unlock"] is NSNull, "\(setup)")
        } catch {
            agent.cleanUp()
            throw error
        }
        return agent
    }

    /// Writes a `/.flatpak-info` naming the app at `appPath`.
    static func writeInfo(appPath: String, to path: String) throws {
        try
            "[Application]\nname=\(flatpakId)\nruntime=runtime/org.example.Platform/x86_64/1\n\n[Instance]\napp-path=\(appPath)\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `bwrap` as the user, with the host's `/usr`, `/app` bound from `app`, `/.flatpak-info`
    /// from `info` and the test directory at its own path; `extra` goes before the program.
    func sandbox(app: String, info: String, extra: [String] = []) -> [String] {
        Self.asUser + [
            "/usr/bin/bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
            "/lib64", "--symlink", "usr/bin", "/bin", "--ro-bind", app, "/app", "--ro-bind", info, "/.flatpak-info",
            "--bind", daemon.root.path, daemon.root.path, "--proc", "/proc", "--dev", "/dev", "--setenv",
            "PYTHONHOME", "/usr", "--die-with-parent",
        ] + extra + ["/app/bin/python3"]
    }

    /// Registers `appId` from a process started by `command`, hardens it as CordonKit does, and
    /// asks for the key: `managed` and the key call's error (`NSNull` when the key came).
    func registerAndGetKey(_ appId: String, command: [String]) async throws -> [String: Any] {
        try await attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": sys.argv[2]})
            if error(reg):
                print(json.dumps({"register": error(reg)}))
                sys.exit(0)
            harden()
            print(json.dumps({"managed": reg["parameters"]["managed"], "key": error(call(s, "io.cordon.App.GetKey"))}))
            """, [appId], command: command)
    }

    /// Runs an attack script with the socket as its first argument.
    func attack(_ body: String, _ arguments: [String] = [], command: [String]) async throws -> [String: Any] {
        try await AttackScript.run(body, [daemon.socketPath] + arguments, in: daemon.root, command: command)
    }

    /// A copy of `file` owned by the user (the attacker's own file) in the test directory.
    func userCopy(of file: String, named name: String) async throws -> String {
        let copy = daemon.root.appending(name)
        try FileManager.default.createDirectory(
            atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: copy)
        try await Self.run(["/bin/chown", "-R", "\(Self.uid):\(Self.uid)", daemon.root.path])
        return copy
    }

    func cleanUp() {
        daemon.cleanUp()
        installation.remove()
    }

    static func run(_ command: [String]) async throws {
        let result = try await runCommand(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        try #require(result.status == 0, "\(command.joined(separator: " ")): \(result.stderr)")
    }
}
