import CordonKit
import CordonProtocol
import CordonSystem
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App identity": a same-user program tries to get an app's key. Each
/// attack is an ordinary Python process speaking varlink; each shows the error it now gets.
@Suite struct AttackIdentityTests {
    /// A daemon with the real default (no admin file trusting unbound apps), initialized and unlocked.
    static func daemon(policy: String? = nil) async throws -> DaemonProcess {
        let daemon = try await DaemonProcess.started(trustUnboundApps: false)
        if let policy {
            try FileManager.default.createDirectory(
                atPath: daemon.adminPolicyDirectory, withIntermediateDirectories: true)
            try policy.write(toFile: daemon.adminPolicyDirectory + "/apps.json", atomically: true, encoding: .utf8)
        }
        let client = try await daemon.client()
        if policy != nil { _ = try await client.reloadPolicy() }
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        await client.close()
        return daemon
    }

    @Test func withNoBindingAnyAppIdGetsNoKey() async throws {
        let daemon = try await Self.daemon()
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            key = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"managed": reg["parameters"]["managed"], "key": error(key)}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["key"] as? String == "io.cordon.App.NotManaged")
        let doctor = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "doctor"])
        #expect(doctor.stdout.contains("no app is bound"), "\(doctor.stdout)")
        try await daemon.stop()
    }

    @Test func aSpawnedBoundBinaryNeverYieldsItsKeyToTheSpawner() async throws {
        let digest = try #require(sha256(ofFileAt: "/usr/bin/sleep"))
        let daemon = try await Self.daemon(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "refuse", "managed": [
                  {"id": "com.example.sleep", "executables": ["/usr/bin/sleep"], "sha256": ["\#(digest)"]}]},
                 "conditions": {"executableMismatch": "block"}}
                """#)
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            import subprocess
            child = subprocess.Popen(["/usr/bin/sleep", "30"])
            s = connect(sys.argv[1])
            direct = call(connect(sys.argv[1]), "io.cordon.App.Register", {"appId": "com.example.sleep"})
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.sleep", "pid": child.pid})
            key = call(s, "io.cordon.App.GetKey")
            child.kill()
            print(json.dumps({"direct": error(direct), "onBehalf": reg["parameters"]["managed"], "key": error(key)}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["direct"] as? String == "io.cordon.App.Refused")
        #expect(answer["onBehalf"] as? Bool == true, "the child is the bound binary: it is enforced as the app")
        #expect(answer["key"] as? String == "io.cordon.App.RegisteredOnBehalf")
        try await daemon.stop()
    }

    @Test func aProcessThatExecsAfterRegisteringLosesTheKey() async throws {
        let daemon = try await Self.daemon(
            policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        defer { daemon.cleanUp() }
        // Registers and reads its key, then execs bash, which asks again on the inherited connection.
        let ask = daemon.root.appending("ask.sh")
        try #"""
        printf '%s\0' '{"method":"io.cordon.App.GetKey","parameters":{}}' >&"$1"
        IFS= read -r -d '' reply <&"$1"
        printf '{"before": "%s", "reply": %s}\n' "$2" "$reply"
        """#.write(toFile: ask, atomically: true, encoding: .utf8)
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            os.set_inheritable(s.fileno(), True)
            os.execv("/bin/bash", ["bash", sys.argv[2], str(s.fileno()), before])
            """, [daemon.socketPath, ask], in: daemon.root)
        #expect(answer["before"] as? String == "key")
        #expect((answer["reply"] as? [String: Any])?["error"] as? String == "io.cordon.App.ProcessChanged")
        #expect(daemon.log.contains("the process now runs another executable"))
        try await daemon.stop()
    }

    @Test func aDebuggerAttachedAfterRegisteringIsCaughtOnTheNextCall() async throws {
        let daemon = try await Self.daemon(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
                 "conditions": {"debuggerAttached": "block"}}
                """#)
        defer { daemon.cleanUp() }
        // A child attaches to its parent with PTRACE_SEIZE (as a debugger would), then the parent asks.
        let answer = try await AttackScript.run(
            """
            import ctypes, time
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                libc = ctypes.CDLL(None, use_errno=True)
                ok = libc.ptrace(0x4206, os.getppid(), None, None) == 0
                os.write(w, b"1" if ok else b"0")
                time.sleep(30)
                os._exit(0)
            attached = os.read(r, 1) == b"1"
            after = error(call(s, "io.cordon.App.GetKey"))
            os.kill(child, 9)
            print(json.dumps({"before": before, "attached": attached, "after": after}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["before"] as? String == "key")
        try #require(answer["attached"] as? Bool == true, "the ptrace attach did not work here")
        #expect(answer["after"] as? String == "io.cordon.App.ProcessChanged")
        try await daemon.stop()
    }

    @Test(arguments: ["LD_AUDIT", "LD_LIBRARY_PATH", "LD_PRELOAD"])
    func injectionThroughTheDynamicLinkerIsRefused(variable: String) async throws {
        let daemon = try await Self.daemon(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
                 "conditions": {"preloadInjected": "block"}}
                """#)
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            print(json.dumps({"register": error(reg), "reason": reg.get("parameters", {}).get("reason", "")}))
            """, [daemon.socketPath], in: daemon.root,
            environment: [variable: daemon.root.appending("no-such-library.so")])
        #expect(answer["register"] as? String == "io.cordon.App.Refused")
        #expect((answer["reason"] as? String)?.contains("\(variable) is set") == true, "\(answer)")
        try await daemon.stop()
    }

    /// A registration's process is pinned by its pidfd (the start time is not read again per
    /// call): a process handed the connection of a registered app that has since exited gets
    /// nothing through it.
    @Test func aConnectionHandedOnByAnExitedAppYieldsNoKey() async throws {
        let daemon = try await Self.daemon(
            policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            a, b = socket.socketpair()
            child = os.fork()
            if child == 0:
                s = connect(sys.argv[1])
                call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
                got = error(call(s, "io.cordon.App.GetKey")) or "key"
                socket.send_fds(a, [got.encode()], [s.fileno()])
                os._exit(0)
            message, fds, _, _ = socket.recv_fds(b, 64, 1)
            os.waitpid(child, 0)
            s = socket.socket(fileno=fds[0])
            after = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"before": message.decode(), "after": error(after)}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["before"] as? String == "key", "\(answer)")
        #expect(answer["after"] as? String == "io.cordon.App.ProcessChanged", "\(answer)")
        try await daemon.stop()
    }

    /// The injection is read once, at registration (the dynamic linker acts only when a program
    /// starts); every later call weighs it against the policy in force then.
    @Test func anInjectionWarnedAboutAtRegistrationIsRefusedOnceThePolicyBlocksIt() async throws {
        let warn = #"""
            {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "conditions": {"preloadInjected": "warn"}}
            """#
        let daemon = try await Self.daemon(policy: warn)
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            with open(sys.argv[2] + "/apps.json", "w") as f:
                f.write(sys.argv[3].replace('"warn"', '"block"'))
            reload = error(call(s, "io.cordon.Policy.Reload"))
            after = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"managed": reg["parameters"]["managed"], "before": before, "reload": reload,
                              "after": error(after), "reason": after.get("parameters", {}).get("reason", "")}))
            """, [daemon.socketPath, daemon.adminPolicyDirectory, warn], in: daemon.root,
            environment: ["LD_PRELOAD": daemon.root.appending("no-such-library.so")])
        #expect(answer["managed"] as? Bool == true, "\(answer)")
        #expect(answer["before"] as? String == "key")
        #expect(answer["reload"] is NSNull, "\(answer)")
        #expect(answer["after"] as? String == "io.cordon.App.ProcessChanged")
        #expect((answer["reason"] as? String)?.contains("LD_PRELOAD is set") == true, "\(answer)")
        try await daemon.stop()
    }

    @Test func aRegisteredSDKAppIsNotDumpable() async throws {
        let daemon = try await Self.daemon(
            policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        defer { daemon.cleanUp() }
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        // No process of this user can attach to it or dump it from here on; its key still comes.
        #expect(!ProcessHardening.isDumpable)
        _ = try await app.key()
        await app.close()
        try await daemon.stop()
    }

    @Test func aSecondProcessCannotRegisterAsALiveManagedApp() async throws {
        let daemon = try await Self.daemon(
            policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        defer { daemon.cleanUp() }
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            print(json.dumps({"register": error(reg), "pid": reg.get("parameters", {}).get("pid")}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["register"] as? String == "io.cordon.App.AppIdInUse")
        #expect(answer["pid"] as? Int == Int(getpid()))
        await app.close()
        try await daemon.stop()
    }
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
