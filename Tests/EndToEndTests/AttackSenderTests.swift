import Foundation
import Testing

/// docs/THREAT-MODEL.md, "A connection speaks only for the process that opened it", as deployed:
/// cordond, the apps and the attacker are one ordinary user outside test mode. The kernel names
/// the writer of every read of an app's connection; bytes written by any other process than the
/// one that connected — through a copy of the socket inherited across `fork`, kept across the
/// child's `exec`, handed over with `SCM_RIGHTS` or taken with `pidfd_getfd` — are never served:
/// the writer gets `io.cordon.Agent.ForeignSender` and the connection closes.
@Suite(.serialized) struct AttackSenderTests {
    static func started() async throws -> UserAgent {
        try await OrdinaryUserIdentityTests.started()
    }

    /// Connect, then exec the bound binary: the attacker's child connects and execs the bound,
    /// unmodified tool (which even hardens itself, without ever registering); the attacker sends
    /// `Register` through its copy of the child's socket. The agent sees who wrote it: refused,
    /// and nothing more is served on that connection.
    @Test func connectThenExecTheBoundBinaryCannotBeRegisteredThroughACopy() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let tool = agent.system.appending("bin/tool")
        let answer = try await agent.attack(
            """
            import time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            child = os.fork()
            if child == 0:
                s.connect(sys.argv[1])
                os.set_inheritable(s.fileno(), True)
                os.execv(sys.argv[2], [sys.argv[2], "-c",
                         "import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(30)"])
            while os.readlink("/proc/%d/exe" % child) != sys.argv[2]:
                time.sleep(0.01)
            time.sleep(0.2)  # the tool has hardened itself
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.tool"})
            key = call(s, "io.cordon.App.GetKey")
            os.kill(child, 9)
            params = reg.get("parameters", {})
            print(json.dumps({"register": error(reg), "pid": params.get("pid"), "sender": params.get("sender"),
                              "child": child, "attacker": os.getpid(), "key": error(key)}))
            """, [tool])
        #expect(answer["register"] as? String == "io.cordon.Agent.ForeignSender", "\(answer)")
        #expect(answer["pid"] as? Int == answer["child"] as? Int, "the error names the process that connected")
        #expect(answer["sender"] as? Int == answer["attacker"] as? Int, "and the one that wrote")
        #expect(answer["key"] as? String == "closed", "\(answer)")
        #expect(agent.log.contains("message refused: not written by the process that connected"), "\(agent.log)")
        let apps = try await agent.cli(["apps"])
        #expect(!apps.stdout.contains("com.example.tool"), "the tool was registered: \(apps.stdout)")
    }

    /// A registered, hardened app forks; the child, which did not `exec`, asks for the key on the
    /// connection it inherited. The child gets `ForeignSender`, not the key, and the connection
    /// ends: a copy of the app's socket is worth nothing to the process holding it.
    @Test func aForkedChildCannotSpeakForTheRegisteredApp() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                reply = call(s, "io.cordon.App.GetKey")
                stored = call(s, "io.cordon.Storage.Get", {"name": "n"})
                os.write(w, json.dumps({"key": error(reply) or "key", "get": error(stored) or "record"}).encode())
                os._exit(0)
            os.waitpid(child, 0)
            got = json.loads(os.read(r, 4096))
            after = error(call(s, "io.cordon.App.GetKey")) or "key"
            print(json.dumps({"register": error(reg), "before": before, "child": got["key"],
                              "childGet": got["get"], "after": after}))
            """)
        #expect(answer["register"] is NSNull, "\(answer)")
        #expect(answer["before"] as? String == "key", "\(answer)")
        #expect(answer["child"] as? String == "io.cordon.Agent.ForeignSender", "\(answer)")
        #expect(answer["childGet"] as? String == "closed", "\(answer)")
        #expect(answer["after"] as? String == "closed", "the connection a copy spoke on is ended: \(answer)")
    }

    /// A registered, hardened app passes its connection on with `SCM_RIGHTS` to another program
    /// of the user (willingly, or tricked into it): the receiver's calls get `ForeignSender`.
    @Test func aConnectionHandedOnWithSCMRightsSpeaksForNobody() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            import subprocess
            if len(sys.argv) > 2:
                # The receiver: another program, given the app's socket over a Unix socket.
                channel = socket.socket(fileno=int(sys.argv[2]))
                _, fds, _, _ = socket.recv_fds(channel, 16, 1)
                reply = call(socket.socket(fileno=fds[0]), "io.cordon.App.GetKey")
                print(json.dumps({"received": len(fds), "key": error(reply) or "key"}))
                sys.exit(0)
            mine, theirs = socket.socketpair()
            receiver = subprocess.Popen([sys.executable, sys.argv[0], sys.argv[1], str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], stdout=subprocess.PIPE)
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            before = error(call(s, "io.cordon.App.GetKey")) or "key"
            socket.send_fds(mine, [b"x"], [s.fileno()])
            out, _ = receiver.communicate(timeout=30)
            got = json.loads(out)
            print(json.dumps({"before": before, "received": got["received"], "key": got["key"]}))
            """)
        #expect(answer["before"] as? String == "key", "\(answer)")
        #expect(answer["received"] as? Int == 1, "\(answer)")
        #expect(answer["key"] as? String == "io.cordon.Agent.ForeignSender", "\(answer)")
    }

    /// A same-user program takes a copy of an app's connection with `pidfd_getfd` while the app is
    /// still dumpable (between `Register` and hardening): its call gets `ForeignSender`. Once the
    /// app has hardened, the kernel refuses the copy itself (`EPERM`).
    @Test func aConnectionTakenWithPidfdGetfdSpeaksForNobody() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            import ctypes, time
            libc = ctypes.CDLL(None, use_errno=True)
            def getfd(pidfd, fd):
                copy = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
                return copy, ctypes.get_errno()
            report_r, report_w = os.pipe()
            go_r, go_w = os.pipe()
            victim = os.fork()
            if victim == 0:
                s = connect(sys.argv[1])
                reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
                os.write(report_w, (json.dumps({"fd": s.fileno(), "register": error(reg)}) + "\\n").encode())
                os.read(go_r, 1)
                harden()
                os.write(report_w, b"hardened\\n")
                time.sleep(30)
                os._exit(0)
            report = os.fdopen(report_r)
            info = json.loads(report.readline())
            pidfd = os.pidfd_open(victim)
            copy, _ = getfd(pidfd, info["fd"])
            key = call(socket.socket(fileno=copy), "io.cordon.App.GetKey") if copy >= 0 else {"error": "no copy"}
            os.write(go_w, b"x")
            report.readline()
            again, errno = getfd(pidfd, info["fd"])
            os.kill(victim, 9)
            print(json.dumps({"register": info["register"], "copied": copy >= 0, "key": error(key),
                              "afterHardening": again, "errno": errno}))
            """)
        #expect(answer["register"] is NSNull, "\(answer)")
        #expect(answer["copied"] as? Bool == true, "\(answer)")
        #expect(answer["key"] as? String == "io.cordon.Agent.ForeignSender", "\(answer)")
        #expect(answer["afterHardening"] as? Int == -1, "\(answer)")
        #expect(answer["errno"] as? Int == Int(EPERM), "\(answer)")
    }
}
