import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App identity": a same-user program tries to get an app's key. Each
/// attack is an ordinary Python process speaking varlink; each shows the error it now gets. The
/// agent, the apps and the attackers are one ordinary user (``UserAgent``: outside test mode, the
/// admin policy root's).
@Suite struct AttackIdentityTests {
    /// The agent as the user with `policy` (the real default when nil: no admin file trusts
    /// unbound apps), initialized and unlocked.
    static func agent(policy: String = #"{"schema": "cordon.policy.v1"}"#) async throws -> UserAgent {
        try await UserAgent(policy: policy)
    }

    static let trusted = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    @Test func withNoBindingAnyAppIdGetsNoKey() async throws {
        let agent = try await Self.agent()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            key = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"managed": reg["parameters"]["managed"], "key": error(key)}))
            """)
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["key"] as? String == "io.cordon.App.NotManaged")
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("no app is bound"), "\(doctor.stdout)")
    }

    @Test func aSpawnedBoundBinaryNeverYieldsItsKeyToTheSpawner() async throws {
        let digest = try #require(sha256(ofFileAt: "/usr/bin/sleep"))
        let agent = try await Self.agent(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "refuse", "managed": [
                  {"id": "com.example.sleep", "executables": ["/usr/bin/sleep"], "sha256": ["\#(digest)"]}]},
                 "conditions": {"executableMismatch": "block"}}
                """#)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            import subprocess
            child = subprocess.Popen(["/usr/bin/sleep", "30"])
            s = connect(sys.argv[1])
            direct = call(connect(sys.argv[1]), "io.cordon.App.Register", {"appId": "com.example.sleep"})
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.sleep", "pid": child.pid})
            harden()
            key = call(s, "io.cordon.App.GetKey")
            child.kill()
            print(json.dumps({"direct": error(direct), "onBehalf": reg["parameters"]["managed"], "key": error(key)}))
            """)
        #expect(answer["direct"] as? String == "io.cordon.App.Refused")
        #expect(answer["onBehalf"] as? Bool == true, "the child is the bound binary: it is enforced as the app")
        #expect(answer["key"] as? String == "io.cordon.App.RegisteredOnBehalf")
    }

    @Test func aProcessThatExecsAfterRegisteringLosesTheKey() async throws {
        let agent = try await Self.agent(policy: Self.trusted)
        defer { agent.cleanUp() }
        // Registers, hardens and reads its key, then execs bash, which asks again on the
        // inherited connection.
        let ask = agent.home.appending("ask.sh")
        try #"""
        printf '%s\0' '{"method":"io.cordon.App.GetKey","parameters":{}}' >&"$1"
        IFS= read -r -d '' reply <&"$1"
        printf '{"before": "%s", "reply": %s}\n' "$2" "$reply"
        """#.write(toFile: ask, atomically: true, encoding: .utf8)
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            os.set_inheritable(s.fileno(), True)
            os.execv("/bin/bash", ["bash", sys.argv[2], str(s.fileno()), before])
            """, [ask])
        #expect(answer["before"] as? String == "key")
        #expect((answer["reply"] as? [String: Any])?["error"] as? String == "io.cordon.App.ProcessChanged")
        #expect(agent.log.contains("the process became dumpable again"), "\(agent.log)")
    }

    /// Prevention: once the app has hardened, a debugger of its user cannot attach at all (the
    /// kernel refuses `PTRACE_SEIZE`), and the key keeps coming.
    @Test func aDebuggerCannotAttachToAHardenedApp() async throws {
        let agent = try await Self.agent(policy: Self.debuggerBlocked)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            \(Self.seizeFromChild)
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            child, attached = seize_from_child()
            after = error(call(s, "io.cordon.App.GetKey")) or "key"
            os.kill(child, 9)
            print(json.dumps({"before": before, "attached": attached, "after": after}))
            """)
        #expect(answer["before"] as? String == "key")
        #expect(answer["attached"] as? Bool == false, "a process of the user attached to a hardened app")
        #expect(answer["after"] as? String == "key")
    }

    /// Detection where prevention comes too late: a debugger that attached while the app was
    /// still dumpable keeps its hold after the app hardens; the first key call finds it.
    @Test func aDebuggerAttachedBeforeTheAppHardenedIsCaughtOnItsFirstKey() async throws {
        let agent = try await Self.agent(policy: Self.debuggerBlocked)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            \(Self.seizeFromChild)
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            child, attached = seize_from_child()
            harden()
            key = call(s, "io.cordon.App.GetKey")
            os.kill(child, 9)
            print(json.dumps({"attached": attached, "key": error(key),
                              "reason": key.get("parameters", {}).get("reason", "")}))
            """)
        try #require(answer["attached"] as? Bool == true, "the ptrace attach did not work here")
        #expect(answer["key"] as? String == "io.cordon.App.ProcessChanged", "\(answer)")
        #expect((answer["reason"] as? String)?.contains("debuggerAttached") == true, "\(answer)")
    }

    /// Python: a child that attaches to its parent with `PTRACE_SEIZE`, as a debugger would;
    /// returns the child and whether the attach worked.
    static let seizeFromChild = """
        import ctypes, time
        def seize_from_child():
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                libc = ctypes.CDLL(None, use_errno=True)
                ok = libc.ptrace(0x4206, os.getppid(), None, None) == 0
                os.write(w, b"1" if ok else b"0")
                time.sleep(30)
                os._exit(0)
            return child, os.read(r, 1) == b"1"
        """

    static let debuggerBlocked = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "conditions": {"debuggerAttached": "block"}}
        """#

    @Test(arguments: ["LD_AUDIT", "LD_LIBRARY_PATH", "LD_PRELOAD"])
    func injectionThroughTheDynamicLinkerIsRefused(variable: String) async throws {
        let agent = try await Self.agent(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
                 "conditions": {"preloadInjected": "block"}}
                """#)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            print(json.dumps({"register": error(reg), "reason": reg.get("parameters", {}).get("reason", "")}))
            """,
            command: UserAgent.asUser + [
                "/usr/bin/env", "\(variable)=\(agent.home.appending("no-such-library.so"))", UserAgent.python,
            ])
        #expect(answer["register"] as? String == "io.cordon.App.Refused")
        #expect((answer["reason"] as? String)?.contains("\(variable) is set") == true, "\(answer)")
    }

    /// A process handed the connection of a registered app that has since exited gets nothing
    /// through it: it did not open the connection (`ForeignSender`); the registration's process is
    /// pinned by its pidfd and its `/proc` directory besides, so a reused pid would not pass either.
    @Test func aConnectionHandedOnByAnExitedAppYieldsNoKey() async throws {
        let agent = try await Self.agent(policy: Self.trusted)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            a, b = socket.socketpair()
            child = os.fork()
            if child == 0:
                s = connect(sys.argv[1])
                call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
                harden()
                got = error(call(s, "io.cordon.App.GetKey")) or "key"
                socket.send_fds(a, [got.encode()], [s.fileno()])
                os._exit(0)
            message, fds, _, _ = socket.recv_fds(b, 64, 1)
            os.waitpid(child, 0)
            s = socket.socket(fileno=fds[0])
            after = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"before": message.decode(), "after": error(after)}))
            """)
        #expect(answer["before"] as? String == "key", "\(answer)")
        #expect(answer["after"] as? String == "io.cordon.Agent.ForeignSender", "\(answer)")
    }

    /// The injection is read once, at registration (the dynamic linker acts only when a program
    /// starts); every later call weighs it against the policy in force then. Root changes the
    /// admin policy while the app waits.
    @Test func anInjectionWarnedAboutAtRegistrationIsRefusedOnceThePolicyBlocksIt() async throws {
        let warn = #"""
            {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "conditions": {"preloadInjected": "warn"}}
            """#
        let agent = try await Self.agent(policy: warn)
        defer { agent.cleanUp() }
        let signals = agent.home.path
        let attack = Task {
            ScriptAnswer(
                value: try await agent.attack(
                    """
                    import time
                    s = connect(sys.argv[1])
                    reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
                    harden()
                    before = error(call(s, "io.cordon.App.GetKey")) or "key"
                    open(sys.argv[2] + "/ready", "w").close()
                    while not os.path.exists(sys.argv[2] + "/go"):
                        time.sleep(0.01)
                    after = call(s, "io.cordon.App.GetKey")
                    print(json.dumps({"managed": reg["parameters"]["managed"], "before": before,
                                      "after": error(after), "reason": after.get("parameters", {}).get("reason", "")}))
                    """, [signals],
                    command: UserAgent.asUser + [
                        "/usr/bin/env", "LD_PRELOAD=\(agent.home.appending("no-such-library.so"))", UserAgent.python,
                    ]))
        }
        try await eventually("the app registered and read its key") {
            FileManager.default.fileExists(atPath: signals + "/ready")
        }
        try warn.replacingOccurrences(of: #""warn""#, with: #""block""#)
            .write(toFile: agent.system.appending("admin/10-apps.json"), atomically: true, encoding: .utf8)
        let reload = try await agent.cli(["policy", "reload"])
        #expect(reload.status == 0, "\(reload.stderr)")
        _ = FileManager.default.createFile(atPath: signals + "/go", contents: nil)
        let answer = try await attack.value.value
        #expect(answer["managed"] as? Bool == true, "\(answer)")
        #expect(answer["before"] as? String == "key")
        #expect(answer["after"] as? String == "io.cordon.App.ProcessChanged")
        #expect((answer["reason"] as? String)?.contains("LD_PRELOAD is set") == true, "\(answer)")
    }

    /// CordonKit hardens an app once registered: its `/proc` files turn root's (no process of
    /// its user can attach to it or read it), and its key still comes.
    @Test func aRegisteredSDKAppIsNotDumpable() async throws {
        let agent = try await Self.agent(policy: Self.trusted)
        defer { agent.cleanUp() }
        let (notes, read) = try await agent.startNotes()
        try await eventually("the notes app writes with its key") { read().contains("wrote note #1") }
        let directory = try #require(ProcessDirectory(pid: notes))
        #expect(directory.dumpability(uid: UInt32(UserAgent.uid) ?? 0) == .nonDumpable)
        let attach = try await agent.attack(
            """
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            ok = libc.ptrace(0x4206, int(sys.argv[2]), None, None) == 0
            print(json.dumps({"attached": ok, "errno": ctypes.get_errno()}))
            """, ["\(notes)"])
        #expect(attach["attached"] as? Bool == false, "\(attach)")
        #expect(attach["errno"] as? Int == Int(EPERM), "\(attach)")
    }

    @Test func aSecondProcessCannotRegisterAsALiveManagedApp() async throws {
        let agent = try await Self.agent(policy: Self.trusted)
        defer { agent.cleanUp() }
        let (notes, _) = try await agent.startNotes()
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            print(json.dumps({"register": error(reg), "pid": reg.get("parameters", {}).get("pid")}))
            """)
        #expect(answer["register"] as? String == "io.cordon.App.AppIdInUse")
        #expect(answer["pid"] as? Int == Int(notes))
    }
}

/// What an attack script printed, handed out of the task that ran it (a JSON object is not
/// `Sendable`, but nothing else holds it).
struct ScriptAnswer: @unchecked Sendable {
    let value: [String: Any]
}

/// Lower-case hex SHA-256 of a file (through `sha256sum`), or nil.
func sha256(ofFileAt path: String) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let output = Pipe()
    process.standardOutput = output
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init)
}
