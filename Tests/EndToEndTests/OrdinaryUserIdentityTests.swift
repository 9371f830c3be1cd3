import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App identity", as deployed: cordond, the apps and the attacker are one
/// ordinary user (``TestUser``), outside test mode, the admin policy root's. A same-user process
/// that is dumpable can be traced and read by any other process of that user, so the agent hands
/// a key or data only to a process that has made itself non-dumpable; it reads what the process
/// runs while it is still dumpable, at registration, and judges injection by what is mapped.
@Suite(.serialized) struct OrdinaryUserIdentityTests {
    /// Unbound apps trusted (the notes example, the scripts); one bound tool, a copy of Python
    /// that root installed; injection and debuggers blocked.
    static let policy = """
        {"schema": "cordon.policy.v1",
         "apps": {"unknown": "trusted", "managed": [{"id": "com.example.tool", "executables": ["$SYSTEM/bin/tool"]}]},
         "conditions": {"preloadInjected": "block", "debuggerAttached": "block"}}
        """

    static func started(initialize: Bool = true) async throws -> UserAgent {
        try await UserAgent(policy: policy, install: ["bin/tool": UserAgent.python], initialize: initialize)
    }

    /// The README's demo as an ordinary user: the notes app, hardened by CordonKit, gets its key
    /// and writes encrypted notes.
    @Test func theHardenedNotesAppGetsItsKeyAndWrites() async throws {
        let agent = try await Self.started(initialize: false)
        defer { agent.cleanUp() }
        let initialized = try await agent.cli(["init", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(initialized.status == 0, "init: \(initialized.stderr)")
        let (_, read) = try await agent.startNotes()
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
        try await eventually("notes are written with the app's key") { read().contains("wrote note #2") }
        #expect(read().contains("key received"), "\(read())")
        #expect(!read().contains("processChanged"), "\(read())")
    }

    /// A registered app that stays dumpable gets `ProcessNotHardened` for its key and its data;
    /// once it hardens, the key comes; an `exec` afterwards makes it dumpable again and ends it.
    @Test func aDumpableAppGetsNothingUntilItHardensAndLosesItWhenItExecs() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            if len(sys.argv) > 2:
                # After the exec: the same process, the same connection, another image.
                s = socket.socket(fileno=int(sys.argv[2]))
                stage = json.loads(sys.argv[3])
                stage["afterExec"] = call(s, "io.cordon.App.GetKey")
                print(json.dumps(stage))
                sys.exit(0)
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            stage = {"register": error(reg)}
            stage["dumpableKey"] = error(call(s, "io.cordon.App.GetKey"))
            stage["dumpablePut"] = error(call(s, "io.cordon.Storage.Put", {"name": "n", "value": "c2VjcmV0"}))
            harden()
            key = call(s, "io.cordon.App.GetKey")
            stage["hardenedKey"] = error(key) or ("key" if key["parameters"].get("key") else "empty")
            stage["hardenedPut"] = error(call(s, "io.cordon.Storage.Put", {"name": "n", "value": "c2VjcmV0"}))
            os.set_inheritable(s.fileno(), True)
            os.execv(sys.executable, [sys.executable, sys.argv[0], sys.argv[1], str(s.fileno()), json.dumps(stage)])
            """)
        #expect(answer["register"] is NSNull, "\(answer)")
        #expect(answer["dumpableKey"] as? String == "io.cordon.App.ProcessNotHardened", "\(answer)")
        #expect(answer["dumpablePut"] as? String == "io.cordon.App.ProcessNotHardened", "\(answer)")
        #expect(answer["hardenedKey"] as? String == "key", "\(answer)")
        #expect(answer["hardenedPut"] is NSNull, "\(answer)")
        let afterExec = try #require(answer["afterExec"] as? [String: Any], "\(answer)")
        #expect(afterExec["error"] as? String == "io.cordon.App.ProcessChanged", "\(answer)")
        let reason = (afterExec["parameters"] as? [String: Any])?["reason"] as? String
        #expect(reason?.contains("dumpable again") == true, "\(answer)")
    }

    /// A process that is already non-dumpable when it registers hides what it runs from its own
    /// user: it is refused with the reason, not taken on trust.
    @Test func aProcessThatHardenedBeforeRegisteringIsRefused() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            harden()
            reg = call(connect(sys.argv[1]), "io.cordon.App.Register", {"appId": "com.example.notes"})
            print(json.dumps({"register": error(reg), "reason": reg.get("parameters", {}).get("reason", "")}))
            """)
        #expect(answer["register"] as? String == "io.cordon.App.InvalidProcess", "\(answer)")
        #expect((answer["reason"] as? String)?.contains("already non-dumpable") == true, "\(answer)")
    }

    /// Injection judged by what is mapped: a library whose constructor blanks `LD_PRELOAD` in the
    /// process's own environment (so `/proc/PID/environ` shows nothing) is still mapped, from a
    /// file the user wrote: the bound tool's registration is refused. The same tool without it
    /// registers, hardens and gets its key.
    @Test func aLibraryThatHidesItsPreloadIsStillSeenMapped() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let tool = agent.system.appending("bin/tool")
        // The attacker's library, built and owned by the user.
        let source = agent.home.appending("evil.c")
        try """
        #include <string.h>
        extern char **environ;
        __attribute__((constructor)) static void hide(void) {
            for (char **e = environ; *e; e++)
                if (strncmp(*e, "LD_PRELOAD=", 11) == 0) memset(*e + 11, 0, strlen(*e + 11));
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let library = agent.home.appending("evil.so")
        let built = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + ["/usr/bin/gcc", "-shared", "-fPIC", "-o", library, source],
            environment: UserAgent.environment(home: agent.home.path))
        try #require(built.status == 0, "gcc: \(built.stderr)")
        let script = """
            environ = open("/proc/self/environ", "rb").read().split(b"\\0")
            shown = [e.decode() for e in environ if e.startswith(b"LD_PRELOAD=")]
            mapped = "evil.so" in open("/proc/self/maps").read()
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.tool"})
            result = {"register": error(reg), "reason": reg.get("parameters", {}).get("reason", ""), "shown": shown,
                      "mapped": mapped}
            if not error(reg):
                harden()
                result["key"] = error(call(s, "io.cordon.App.GetKey"))
            print(json.dumps(result))
            """
        // Set after `setpriv` (the library would blank it in `setpriv`'s own environment first).
        let injected = try await agent.attack(
            script, command: UserAgent.asUser + ["/usr/bin/env", "LD_PRELOAD=\(library)", tool])
        #expect(injected["mapped"] as? Bool == true, "the library is loaded: \(injected)")
        #expect(injected["shown"] as? [String] == ["LD_PRELOAD="], "the library blanked its variable: \(injected)")
        #expect(injected["register"] as? String == "io.cordon.App.Refused", "\(injected)")
        let reason = injected["reason"] as? String ?? ""
        #expect(reason.contains("preloadInjected") && reason.contains(library), "\(injected)")
        let clean = try await agent.attack(script, command: UserAgent.asUser + [tool])
        #expect(clean["register"] is NSNull && clean["mapped"] as? Bool == false, "\(clean)")
        #expect(clean["key"] is NSNull, "\(clean)")
    }
}
