import CordonTrust
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/THREAT-MODEL.md, "Admin policy": outside test mode every admin path is opened once, at
/// start, component by component without following links, `/proc` refused, each component root's
/// and writable by no one else, and read through the descriptor held from then on. cordond and
/// the attacker run as one ordinary uid (65534); root installs the admin files.
@Suite(.enabled(if: getuid() == 0, "root installs the admin files; cordond and the attacker run as uid 65534"))
struct AttackAdminPathTests {
    static let asUser = NobodyAgent.asUser
    static let adminPolicy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "unmanaged"}}"#
    /// What the attacker would make an admin file: its Python bound as the notes app.
    static let userPolicy = """
        {"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "com.example.notes",
          "executables": ["\(NobodyAgent.python)"]}]}}
        """

    /// A test tree: root's directory (0755) holding `home` (the user's own), `shared` (root's,
    /// sticky and world-writable, as /tmp: the user may put its own links there) and `etc`
    /// (root's admin files).
    struct Tree {
        let root: TemporaryDirectory
        var home: String { root.appending("home") }
        var shared: String { root.appending("shared") }
        var etc: String { root.appending("etc") }

        init() throws {
            root = try TemporaryDirectory()
            chmod(root.path, 0o755)
            for (directory, mode) in [("home", 0o755), ("shared", 0o1777), ("etc", 0o755), ("etc/policy.d", 0o755)] {
                try FileManager.default.createDirectory(
                    atPath: root.appending(directory), withIntermediateDirectories: true)
                chmod(root.appending(directory), mode_t(mode))
            }
            try AttackAdminPathTests.adminPolicy.write(
                toFile: etc + "/policy.d/10-admin.json", atomically: true, encoding: .utf8)
            chown(home, 65534, 65534)
        }

        /// cordond's arguments for directories of the user's own, outside test mode.
        var daemonArguments: [String] {
            [
                Binaries.cordond.path, "--runtime-dir", home + "/run", "--data-dir", home + "/data", "--config-dir",
                home + "/config", "--log-target", "stderr", "--log-level", "notice",
            ]
        }

        /// The environment: no admin input but the ones a test names, no session bus, no test mode
        /// (outside test mode the system bus is the system's own, an admin input like the others).
        func environment(_ extra: [String: String] = [:]) -> [String: String] {
            let nowhere = "unix:path=" + root.appending("no-bus")
            return [
                "CORDON_TEST_MODE": "", "CORDON_INSECURE_FAST_KDF": "", "CORDON_ADMIN_POLICY_DIR": "",
                "CORDON_TRUST_DIR": "", "CORDON_ADMIN_SETTINGS": "", "CORDON_PROMPT_PROGRAM": "",
                "CORDON_TPM_TCTI": "", "CORDON_SYSTEM_BUS_ADDRESS": "", "DBUS_SYSTEM_BUS_ADDRESS": "",
                "CORDON_SESSION_BUS_ADDRESS": nowhere,
            ].merging(extra) { $1 }
        }
    }

    /// Runs `command` as the user; it must succeed.
    static func asUser(_ command: [String]) async throws {
        let result = try await runCommand(URL(fileURLWithPath: asUser[0]), Array(asUser.dropFirst()) + command)
        try #require(result.status == 0, "\(command.joined(separator: " ")): \(result.stderr)")
    }

    /// Starts cordond as the user with `arguments`, expecting it to refuse; what it said.
    func refused(_ tree: Tree, _ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        let result = try await runCommand(
            URL(fileURLWithPath: Self.asUser[0]), Array(Self.asUser.dropFirst()) + tree.daemonArguments + arguments,
            environment: tree.environment(environment))
        #expect(result.status == 2, "cordond started with \(arguments): \(result.stderr)")
        #expect(result.stderr.contains("hint: put these settings in an admin policy"), "\(result.stderr)")
        return result.stderr
    }

    /// A process of the user's in a user and mount namespace of its own, a tmpfs of its own on
    /// /mnt holding `p/50-user.json`: its `/proc/PID/root/mnt` is the user's, though `/mnt` is root's.
    final class UserNamespace: Sendable {
        let process: SpawnedCommand
        var pid: Int32 { process.pid }

        init(tree: Tree) async throws {
            let ready = tree.home + "/namespace-ready"
            let script =
                "mount -t tmpfs user /mnt && mkdir /mnt/p && printf '%s' \"$1\" > /mnt/p/50-user.json "
                + "&& touch \(ready) && exec cat"
            process = try SpawnedCommand(
                path: AttackAdminPathTests.asUser[0],
                arguments: Array(AttackAdminPathTests.asUser.dropFirst()) + [
                    "/usr/bin/unshare", "-Urm", "/bin/sh", "-c", script, "sh", AttackAdminPathTests.userPolicy,
                ], environment: ProcessInfo.processInfo.environment)
            try await eventually("the user's namespace is ready") { FileManager.default.fileExists(atPath: ready) }
        }

        /// Ends it (`cat` sees the end of its input).
        func stop() { _ = process.finish(input: nil) }
    }

    @Test func anAdminDirectoryNamedThroughALinkIsRefusedNamingTheLink() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        // The user's links to root's directory: retargeted after start, they would make the
        // user's own directory the admin one.
        try await Self.asUser(["/bin/ln", "-s", tree.etc + "/policy.d", tree.shared + "/link"])
        try await Self.asUser(["/bin/ln", "-s", tree.etc + "/policy.d", tree.home + "/link"])
        for flag in ["--admin-policy-dir", "--trust-dir", "--flatpak-installation"] {
            let said = try await refused(tree, [flag, tree.shared + "/link"])
            #expect(said.contains("\(flag) names \(tree.shared)/link: component 'link' is a symbolic link"), "\(said)")
        }
        let home = try await refused(tree, [], environment: ["CORDON_ADMIN_POLICY_DIR": tree.home + "/link"])
        #expect(
            home.contains(
                "CORDON_ADMIN_POLICY_DIR names \(tree.home)/link: component 'home' is not owned by root (uid 65534)"),
            "\(home)")
        // Nor a path that climbs out of a directory of the user's.
        let climbing = try await refused(tree, ["--admin-policy-dir", tree.home + "/../etc/policy.d"])
        #expect(climbing.contains("component '..' climbs to the parent directory"), "\(climbing)")
        // A group-writable admin directory is refused too.
        chmod(tree.etc + "/policy.d", 0o775)
        let writable = try await refused(tree, ["--admin-policy-dir", tree.etc + "/policy.d"])
        #expect(writable.contains("component 'policy.d' is writable by group or others"), "\(writable)")
    }

    /// cordond running as the user outside test mode; `stop()` ends it and returns what it said.
    final class RunningAgent: @unchecked Sendable {
        let process: SpawnedCommand
        let socket: String
        private var stopped = false

        init(_ tree: Tree, _ arguments: [String], environment: [String: String] = [:]) async throws {
            process = try SpawnedCommand(
                path: AttackAdminPathTests.asUser[0],
                arguments: Array(AttackAdminPathTests.asUser.dropFirst()) + tree.daemonArguments + arguments,
                environment: ProcessInfo.processInfo.environment.merging(tree.environment(environment)) { $1 })
            socket = tree.home + "/run/agent.sock"
            let (pid, socket) = (process.pid, socket)
            do {
                try await eventually("cordond answers the user") {
                    guard kill(pid, 0) == 0 else { return true }
                    let probe = try await runCommand(
                        URL(fileURLWithPath: AttackAdminPathTests.asUser[0]),
                        Array(AttackAdminPathTests.asUser.dropFirst()) + [
                            NobodyAgent.python, "-c",
                            "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", socket,
                        ])
                    return probe.status == 0
                }
            } catch {
                _ = stop()
                throw error
            }
        }

        /// Ends cordond (SIGTERM) and returns its output; nil when already stopped.
        func stop() -> CommandResult? {
            guard !stopped else { return nil }
            stopped = true
            kill(process.pid, SIGTERM)
            return process.finish(input: nil)
        }
    }

    @Test func aReloadReadsTheDirectoryOpenedNotWhatItsNameMeansNow() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        let admin = tree.etc + "/policy.d"
        let agent = try await RunningAgent(tree, ["--admin-policy-dir", admin])
        defer { _ = agent.stop() }
        let socket = agent.socket
        // The watcher watches the directory held (inotify on /proc/self/fd/N): a file root adds
        // is applied without a reload.
        try Self.adminPolicy.write(toFile: admin + "/20-admin.json", atomically: true, encoding: .utf8)
        try await eventually("the new admin file is read") {
            let status = try await AttackScript.run(
                """
                s = connect(sys.argv[1])
                reply = call(s, "io.cordon.Policy.GetStatus")
                sources = reply.get("parameters", {}).get("status", {}).get("sources", [])
                print(json.dumps({"paths": [x.get("path") for x in sources]}))
                """, [socket], in: tree.root, command: Self.asUser + [NobodyAgent.python])
            return (status["paths"] as? [String])?.contains(admin + "/20-admin.json") == true
        }
        // The name now means the user's directory: the admin one moved away and a link to the
        // user's files put in its place.
        try FileManager.default.createDirectory(atPath: tree.home + "/mine", withIntermediateDirectories: true)
        try Self.userPolicy.write(toFile: tree.home + "/mine/50-user.json", atomically: true, encoding: .utf8)
        try await NobodyAgent.run(["/bin/chown", "-R", "65534:65534", tree.home + "/mine"])
        try FileManager.default.moveItem(atPath: admin, toPath: tree.etc + "/policy.d.old")
        try FileManager.default.createSymbolicLink(atPath: admin, withDestinationPath: tree.home + "/mine")
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reply = call(s, "io.cordon.Policy.Reload")
            status = reply.get("parameters", {}).get("status", {})
            print(json.dumps({"error": error(reply), "sources": status.get("sources", []),
                              "admin": status.get("adminDirectory")}))
            """, [socket], in: tree.root, command: Self.asUser + [NobodyAgent.python])
        #expect(answer["error"] is NSNull, "\(answer)")
        let sources = try #require(answer["sources"] as? [[String: Any]])
        let paths = sources.compactMap { $0["path"] as? String }
        #expect(paths.contains(admin + "/10-admin.json"), "the admin file opened is still read: \(paths)")
        #expect(!paths.contains { $0.contains("50-user") }, "the user's file became an admin file: \(paths)")
        #expect(answer["admin"] as? String == admin)
        let output = try #require(agent.stop())
        #expect(!output.stderr.contains("50-user"), "\(output.stderr)")
    }

    @Test func procAdminPathsAreRefused() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        let namespace = try await UserNamespace(tree: tree)
        defer { namespace.stop() }
        // What the kernel resolves through /proc/PID/root is the user's tmpfs.
        let mnt = "/proc/\(namespace.pid)/root/mnt"
        for arguments in [
            ["--admin-policy-dir", mnt + "/p"], ["--trust-dir", mnt + "/p"], ["--flatpak-installation", mnt],
            ["--admin-policy-dir", "/proc/self/root" + tree.etc + "/policy.d"],
        ] {
            let said = try await refused(tree, arguments)
            #expect(
                said.contains(
                    "\(arguments[0]) names \(arguments[1]): component 'proc' is on the procfs pseudo-filesystem"),
                "\(said)")
        }
    }

    @Test func adminSettingsOrTheirPinentryThroughProcOrALinkAreRefused() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        let namespace = try await UserNamespace(tree: tree)
        defer { namespace.stop() }
        let root = "/proc/\(namespace.pid)/root"
        // The settings themselves through /proc, or through the user's link.
        let proc = try await refused(tree, ["--admin-settings", root + "/etc/hostname"])
        #expect(proc.contains("--admin-settings names \(root)/etc/hostname: component 'proc'"), "\(proc)")
        let settings = tree.etc + "/settings.json"
        try #"{"pinentry": "/usr/bin/pinentry-curses"}"#.write(toFile: settings, atomically: true, encoding: .utf8)
        chmod(settings, 0o644)
        try await Self.asUser(["/bin/ln", "-s", settings, tree.shared + "/settings.json"])
        let linked = try await refused(tree, [], environment: ["CORDON_ADMIN_SETTINGS": tree.shared + "/settings.json"])
        #expect(
            linked.contains(
                "CORDON_ADMIN_SETTINGS names \(tree.shared)/settings.json: component 'settings.json' is a symbolic link"
            ),
            "\(linked)")
        // Root's settings naming a pinentry through /proc (the user's namespace) or a link of the user's.
        try await Self.asUser(["/bin/ln", "-s", "/usr/bin/pinentry-curses", tree.shared + "/pinentry"])
        for (program, component) in [
            (root + "/usr/bin/pinentry-curses", "component 'proc' is on the procfs pseudo-filesystem"),
            (tree.shared + "/pinentry", "component 'pinentry' is a symbolic link"),
        ] {
            try #"{"pinentry": "\#(program)"}"#.write(toFile: settings, atomically: true, encoding: .utf8)
            let said = try await refused(tree, ["--admin-settings", settings])
            #expect(said.contains("--admin-settings names \(settings), which names a pinentry"), "\(said)")
            #expect(said.contains("the pinentry \(program) (from \(settings)): \(component)"), "\(said)")
        }
    }

    /// The pinentry root's admin settings name, as the user would see it run: a script that
    /// records how it was started (in the user's directory) and answers GETPIN.
    static func pinentry(recordingIn directory: String, passcode: String) -> String {
        """
        #!/bin/sh
        printf '%s' "$0" > '\(directory)/started-as'
        echo "OK Pleased to meet you"
        while IFS= read -r line; do
          case "$line" in
            GETPIN) printf 'D %s\\nOK\\n' '\(passcode)' ;;
            BYE) echo "OK closing connection"; exit 0 ;;
            *) echo "OK" ;;
          esac
        done
        """
    }

    @Test func thePinentryOfTheAdminSettingsAndThePromptProgramRunThroughTheirDescriptors() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        let passcode = "Kx9-Wq7-Lm3-Zt5"
        let program = tree.etc + "/pinentry"
        try Self.pinentry(recordingIn: tree.home, passcode: passcode)
            .write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        let settings = tree.etc + "/settings.json"
        try #"{"pinentry": "\#(program)"}"#.write(toFile: settings, atomically: true, encoding: .utf8)
        chmod(settings, 0o644)
        try """
        {"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "com.example.notes",
          "executables": ["\(NobodyAgent.python)"]}], "unknown": "unmanaged"}, "lock": {"reauthGraceSeconds": 0}}
        """.write(toFile: tree.etc + "/policy.d/10-admin.json", atomically: true, encoding: .utf8)
        // A prompt program named as an admin input: root's wrapper around cordon, recording how
        // it was started.
        let prompt = tree.etc + "/prompt"
        try "#!/bin/sh\nprintf '%s' \"$0\" > '\(tree.home)/prompt-started-as'\nexec '\(Binaries.cordon.path)' \"$@\"\n"
            .write(toFile: prompt, atomically: true, encoding: .utf8)
        chmod(prompt, 0o755)
        let agent = try await RunningAgent(
            tree,
            [
                "--admin-policy-dir", tree.etc + "/policy.d", "--admin-settings", settings, "--prompt-program",
                prompt,
            ],
            environment: ["DISPLAY": ":99", "XDG_SESSION_ID": "", "PINENTRY": ""])
        defer { _ = agent.stop() }
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            out = {"init": error(call(s, "io.cordon.Agent.Initialize", {"passcode": sys.argv[2]}))}
            out["unlock"] = error(call(s, "io.cordon.Agent.Unlock", {"passcode": sys.argv[2]}))
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            out["register"] = error(reg)
            out["managed"] = reg.get("parameters", {}).get("managed")
            out["lock"] = error(call(s, "io.cordon.Agent.Lock"))
            reply = call(s, "io.cordon.App.RequestUnlock", {"timeoutSeconds": 60})
            out["request"] = error(reply)
            out["reason"] = reply.get("parameters", {}).get("reason")
            out["state"] = reply.get("parameters", {}).get("state")
            out["prompted"] = reply.get("parameters", {}).get("prompted")
            print(json.dumps(out))
            """, [agent.socket, passcode], in: tree.root, command: Self.asUser + [NobodyAgent.python])
        #expect(answer["init"] is NSNull && answer["unlock"] is NSNull && answer["register"] is NSNull, "\(answer)")
        #expect(answer["managed"] as? Bool == true, "\(answer)")
        #expect(answer["state"] as? String == "unlocked", "\(answer)")
        #expect(answer["prompted"] as? Bool == true, "\(answer)")
        // What ran was the file opened and checked, through its descriptor, not a name.
        let startedAs = try? String(contentsOfFile: tree.home + "/started-as", encoding: .utf8)
        #expect(startedAs == "/proc/self/fd/3", "\(answer)")
        let promptStartedAs = try? String(contentsOfFile: tree.home + "/prompt-started-as", encoding: .utf8)
        #expect(promptStartedAs == "/proc/self/fd/3", "the prompt program ran through its descriptor too")
    }

    @Test func signedAdminFilesAreVerifiedWithKeysReadThroughTheTrustDirectoryHeld() async throws {
        let tree = try Tree()
        defer { tree.root.remove() }
        let pair = PolicySigning.generateKeyPair()
        let trust = tree.etc + "/trust"
        try FileManager.default.createDirectory(atPath: trust, withIntermediateDirectories: true)
        chmod(trust, 0o755)
        try pair.publicKey.write(toFile: trust + "/admin.pub", atomically: true, encoding: .utf8)
        try pair.privateKey.write(toFile: tree.etc + "/admin.key", atomically: true, encoding: .utf8)
        let signed = tree.etc + "/policy.d/20-signed.json"
        try Self.adminPolicy.write(toFile: signed, atomically: true, encoding: .utf8)
        let signing = try await runCommand(
            Binaries.cordon,
            ["policy", "sign", signed, "--key", tree.etc + "/admin.key", "--serial", "1", "--expires", "2099-01-01"])
        try #require(signing.status == 0, "\(signing.stderr)")
        for file in [trust + "/admin.pub", signed, signed + ".sig", tree.etc + "/policy.d/10-admin.json"] {
            chmod(file, 0o644)
        }
        let agent = try await RunningAgent(
            tree, ["--admin-policy-dir", tree.etc + "/policy.d", "--trust-dir", trust])
        defer { _ = agent.stop() }
        let status = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reply = call(s, "io.cordon.Policy.GetStatus")
            st = reply.get("parameters", {}).get("status", {})
            print(json.dumps({"keys": st.get("trustedKeys"), "sources": {x.get("path"): [x.get("status"),
                x.get("signedBy")] for x in st.get("sources", [])}}))
            """, [agent.socket], in: tree.root, command: Self.asUser + [NobodyAgent.python])
        #expect(status["keys"] as? Int == 1, "\(status)")
        let sources = try #require(status["sources"] as? [String: [Any]])
        #expect(sources[signed]?.first as? String == "applied", "\(sources)")
        #expect(sources[signed]?.last is String, "signed by the trusted key: \(sources)")
        #expect(sources[tree.etc + "/policy.d/10-admin.json"]?.first as? String == "rejected", "unsigned: \(sources)")
    }
}
