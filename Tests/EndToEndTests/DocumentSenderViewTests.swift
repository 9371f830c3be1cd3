import Foundation
import Testing

/// Documents opened as the sender sees them, and the receiver reading what was decided
/// (docs/THREAT-MODEL.md, "Documents"). The agent, the apps and the attacker all run as one
/// ordinary uid (65534, ``NobodyAgent``): a managed app shares `/proc/self/maps`, a link to
/// `/proc/self/smaps` or a directory it swaps for a link to `/proc/self`, rewrites a text file as a
/// PDF once it was decided on, or hides a PDF behind a byte-order mark, a blank line or some text.
///
/// The apps are plain Python programs bound as managed apps; one program plays the sender and
/// the receiver on two registrations, so nothing needs coordinating between processes.
@Suite(.serialized) struct DocumentSenderViewTests {
    static let policy = """
        {"schema": "cordon.policy.v1", "apps": {"managed": [
          {"id": "com.example.attacker", "executables": ["\(NobodyAgent.python)"]},
          {"id": "com.example.viewer", "executables": ["\(NobodyAgent.python)"]}
        ]}, "documents": {"sendTo": "any", "receiveFrom": "any", "blockedTypes": [".pdf"]}}
        """

    /// Registers the viewer (subscribed) and the attacker: `viewer`, `token`, `events` (the
    /// viewer's stream) and `attacker` (its connection); `share(path)` answers the share's error
    /// and reason; `receive(shared)`, once the share `shared` went through (None otherwise), reads
    /// the next `OpenDocument` event and fetches its descriptor: the document's id, the bytes,
    /// `F_GET_SEALS`, whether a write went through, the size and blocks.
    static let apps = """
        import array, fcntl
        def send_more(s, method, parameters):
            s.sendall(json.dumps({"method": method, "parameters": parameters, "more": True}).encode() + b"\\0")
        pending = {}
        def read_message(s):
            data = pending.pop(s, b"")
            while b"\\0" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    raise SystemExit("closed")
                data += chunk
            message, rest = data.split(b"\\0", 1)
            pending[s] = rest
            return json.loads(message.decode())
        viewer = connect(sys.argv[1])
        reg = call(viewer, "io.cordon.App.Register", {"appId": "com.example.viewer"})
        assert not error(reg), reg
        token = reg["parameters"]["token"]
        events = connect(sys.argv[1])
        send_more(events, "io.cordon.App.Subscribe", {"token": token})
        assert read_message(events)["parameters"]["event"]["kind"] == "State"
        attacker = connect(sys.argv[1])
        reg = call(attacker, "io.cordon.App.Register", {"appId": "com.example.attacker"})
        assert not error(reg) and reg["parameters"]["managed"], reg
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, as CordonKit does: data only then
        def share(path, content_type=None):
            parameters = {"path": path, "target": "com.example.viewer"}
            if content_type:
                parameters["contentType"] = content_type
            reply = call(attacker, "io.cordon.App.ShareDocument", parameters)
            return {"error": error(reply), "reason": reply.get("parameters", {}).get("reason", "")}
        def receive(shared):
            # Only once a share went through: otherwise no event comes (and the test must not hang).
            if shared["error"] is not None:
                return None
            event = read_message(events)["parameters"]["event"]
            document = event["document"]
            s = connect(sys.argv[1])
            s.sendall(json.dumps({"method": "io.cordon.App.OpenDocument",
                                  "parameters": {"id": document["id"], "token": token}}).encode() + b"\\0")
            data, fds = b"", []
            while not data.endswith(b"\\0"):
                message, ancillary, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
                for level, kind, payload in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds += array.array("i", payload[:4]).tolist()
                if not message:
                    break
                data += message
            s.close()
            reply = json.loads(data[:-1].decode())
            assert not error(reply) and len(fds) == 1, (reply, fds)
            fd = fds[0]
            status = os.fstat(fd)
            head = os.pread(fd, 4096, 0)
            try:
                os.pwrite(fd, b"x", 0)
                written = True
            except OSError:
                written = False
            try:
                seals = fcntl.fcntl(fd, 1034)  # F_GET_SEALS
            except OSError:
                seals = None  # not a memfd
            os.close(fd)
            return {"id": document["id"], "path": document["path"], "contentType": document["contentType"],
                    "head": head.decode("latin-1"), "seals": seals, "written": written,
                    "size": status.st_size, "blocks": status.st_blocks}
        """

    /// The seals every snapshot carries: F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE.
    static let seals = 0x1 | 0x2 | 0x4 | 0x8

    /// Runs `body` after ``apps`` as the user, with the socket and the user's directory as its
    /// first arguments.
    static func attack(_ agent: NobodyAgent, _ body: String) async throws -> [String: Any] {
        try await agent.attack(
            apps + "\n" + body, [agent.daemon.root.path], command: NobodyAgent.asUser + [NobodyAgent.python])
    }

    @Test func procSelfIsRefusedNeverTheAgentsOwnMap() async throws {
        let agent = try await NobodyAgent.start(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await Self.attack(
            agent,
            """
            home = sys.argv[2]
            os.symlink("/proc/self/smaps", home + "/report.txt")
            os.symlink("/proc/self", home + "/self")
            with open(home + "/notes.txt", "w") as f:
                f.write("the real notes\\n")
            out = {name: share(path) for name, path in [
                ("maps", "/proc/self/maps"), ("smaps", "/proc/self/smaps"), ("link", home + "/report.txt"),
                ("dir", home + "/self/maps"), ("stdin", "/dev/stdin"), ("sys", "/sys/kernel/uevent_seqnum")]}
            # Nothing reached the viewer: the first document it gets is the one shared next.
            out["notes"] = share(home + "/notes.txt")
            out["received"] = receive(out["notes"])
            print(json.dumps(out))
            """)
        for name in ["maps", "smaps", "link", "dir", "stdin"] {
            let refusal = try #require(answer[name] as? [String: Any], "\(name)")
            #expect(refusal["error"] as? String == "io.cordon.App.Denied", "\(name): \(refusal)")
            #expect(
                (refusal["reason"] as? String)?.contains("/proc is on procfs, a pseudo-filesystem") == true,
                "\(name): \(refusal)")
        }
        let sys = try #require(answer["sys"] as? [String: Any])
        #expect((sys["reason"] as? String)?.contains("/sys is on sysfs, a pseudo-filesystem") == true, "\(sys)")
        let notes = try #require(answer["notes"] as? [String: Any])
        #expect(notes["error"] is NSNull, "\(notes)")
        let received = try #require(answer["received"] as? [String: Any])
        #expect(received["head"] as? String == "the real notes\n", "\(received)")
        #expect(received["path"] as? String == agent.daemon.root.appending("notes.txt"))
        try await agent.daemon.stop()
    }

    @Test func aDirectorySwappedForALinkToProcSelfChangesNothing() async throws {
        let agent = try await NobodyAgent.start(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await Self.attack(
            agent,
            """
            home = sys.argv[2]
            d = home + "/d"
            os.mkdir(d)
            with open(d + "/maps", "w") as f:
                f.write("the decided text\\n")
            def swap():
                os.rename(d, d + ".real")
                os.symlink("/proc/self", d + ".link")
                os.rename(d + ".link", d)
            def unswap():
                os.unlink(d)
                os.rename(d + ".real", d)
            # Decided, then the directory becomes a link to /proc/self: the receiver reads the decision.
            after = share(d + "/maps")
            swap()
            received = receive(after)
            through = share(d + "/maps")
            unswap()
            # Swapped back and forth while the agent resolves the path, 300 times.
            child = os.fork()
            if child == 0:
                try:
                    while True:
                        swap()
                        unswap()
                except BaseException:
                    pass
                os._exit(0)
            outcomes, contents = {}, set()
            for _ in range(300):
                answer = share(d + "/maps")
                if answer["error"] is None:
                    contents.add(receive(answer)["head"])
                    key = "shared"
                elif "/proc is on procfs" in answer["reason"]:
                    key = "procfs"
                elif "does not resolve" in answer["reason"]:
                    key = "missing"
                else:
                    key = answer["error"] + ": " + answer["reason"]
                outcomes[key] = outcomes.get(key, 0) + 1
            os.kill(child, 9)
            os.waitpid(child, 0)
            print(json.dumps({"after": after, "received": received, "through": through,
                              "outcomes": outcomes, "contents": sorted(contents)}))
            """)
        let after = try #require(answer["after"] as? [String: Any])
        #expect(after["error"] is NSNull, "\(after)")
        let received = try #require(answer["received"] as? [String: Any])
        #expect(received["head"] as? String == "the decided text\n", "\(received)")
        let through = try #require(answer["through"] as? [String: Any])
        #expect((through["reason"] as? String)?.contains("/proc is on procfs") == true, "\(through)")
        let outcomes = try #require(answer["outcomes"] as? [String: Int])
        #expect(Set(outcomes.keys).isSubset(of: ["shared", "procfs", "missing"]), "\(outcomes)")
        #expect(outcomes.values.reduce(0, +) == 300)
        let contents = try #require(answer["contents"] as? [String])
        #expect(contents.allSatisfy { $0 == "the decided text\n" }, "\(contents)")
        try await agent.daemon.stop()
    }

    @Test func aTextFileRewrittenAsAPDFIsReadAsTheDecidedText() async throws {
        let agent = try await NobodyAgent.start(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await Self.attack(
            agent,
            """
            path = sys.argv[2] + "/notes.txt"
            with open(path, "w") as f:
                f.write("quarterly numbers\\n")
            shared = share(path)
            # Decided as text; now the very inode becomes a PDF (no rename: written in place).
            with open(path, "r+b") as f:
                f.write(b"%PDF-1.7\\n1 0 obj\\n")
            received = receive(shared)
            with open(path, "rb") as f:
                now = f.read().decode("latin-1")
            print(json.dumps({"shared": shared, "received": received, "now": now}))
            """)
        let shared = try #require(answer["shared"] as? [String: Any])
        #expect(shared["error"] is NSNull, "\(shared)")
        #expect((answer["now"] as? String)?.hasPrefix("%PDF-") == true)
        let received = try #require(answer["received"] as? [String: Any])
        #expect(received["head"] as? String == "quarterly numbers\n", "\(received)")
        #expect(received["contentType"] as? String == "text/plain")
        #expect(received["seals"] as? Int == Self.seals, "\(received)")
        #expect(received["written"] as? Bool == false)
        try await agent.daemon.stop()
    }

    @Test func aPDFBehindABOMABlankLineOrTextIsAPDF() async throws {
        let agent = try await NobodyAgent.start(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await Self.attack(
            agent,
            """
            home = sys.argv[2]
            pdf = b"%PDF-1.7\\n1 0 obj\\n<< /Type /Catalog >>\\nendobj\\ntrailer\\n<< /Root 1 0 R >>\\n"
            out = {}
            for name, prefix in [("bom", b"\\xef\\xbb\\xbf"), ("blank", b"\\n"), ("text", b"a" * 99 + b"\\n")]:
                with open(home + "/" + name + ".txt", "wb") as f:
                    f.write(prefix + pdf)
                out[name] = share(home + "/" + name + ".txt")
                out[name + "-claimed"] = share(home + "/" + name + ".txt", "text/plain")
            print(json.dumps(out))
            """)
        for name in ["bom", "blank", "text"] {
            let unclaimed = try #require(answer[name] as? [String: Any])
            #expect(unclaimed["error"] as? String == "io.cordon.App.Denied", "\(name): \(unclaimed)")
            #expect((unclaimed["reason"] as? String)?.contains("blockedTypes") == true, "\(name): \(unclaimed)")
            let claimed = try #require(answer[name + "-claimed"] as? [String: Any])
            #expect(
                claimed["reason"] as? String
                    == "the content of \(agent.daemon.root.appending(name + ".txt")) is application/pdf, not the claimed text/plain",
                "\(name): \(claimed)")
        }
        try await agent.daemon.stop()
    }

    @Test func aTwoGiBSparseFileIsSharedWithoutItsHolesAndTooMuchDataIsRefused() async throws {
        let agent = try await NobodyAgent.start(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await Self.attack(
            agent,
            """
            home = sys.argv[2]
            with open(home + "/big.log", "wb") as f:
                f.write(b"log start\\n")
                f.truncate(2 << 30)
            sparse = share(home + "/big.log")
            received = receive(sparse)
            with open(home + "/dense.bin", "wb") as f:
                os.posix_fallocate(f.fileno(), 0, (256 << 20) + (1 << 20))
            dense = share(home + "/dense.bin")
            print(json.dumps({"sparse": sparse, "received": received, "dense": dense}))
            """)
        let sparse = try #require(answer["sparse"] as? [String: Any])
        #expect(sparse["error"] is NSNull, "\(sparse)")
        let received = try #require(answer["received"] as? [String: Any])
        #expect(received["size"] as? Int == 2 << 30)
        #expect((received["head"] as? String)?.hasPrefix("log start\n") == true)
        // The snapshot keeps the holes: a few pages of memory, not 2 GiB.
        #expect((received["blocks"] as? Int ?? .max) * 512 <= 1 << 20, "\(received)")
        #expect(received["seals"] as? Int == Self.seals)
        let dense = try #require(answer["dense"] as? [String: Any])
        #expect(dense["error"] as? String == "io.cordon.App.Denied")
        #expect((dense["reason"] as? String)?.contains("holds more than 256 MiB of data") == true, "\(dense)")
        try await agent.daemon.stop()
    }

    @Test func aSandboxedAppSharesWhatItSeesNotWhatTheHostHas() async throws {
        let agent = try await NobodyAgent.start(
            policy: """
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "org.example.Notes", "executables": ["/app/bin/python3"], "flatpak": "org.example.Notes"}
                ]}, "documents": {"sendTo": "any", "receiveFrom": "any"}}
                """)
        defer { agent.cleanUp() }
        let info = agent.daemon.root.appending("flatpak-info")
        // The Flatpak app in its sandbox (no /etc in it; a /.flatpak-info the host does not have).
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "org.example.Notes"})
            assert not error(reg) and reg["parameters"]["managed"], reg
            harden()
            out = {}
            for name, path in [("inside", "/.flatpak-info"), ("host", "/etc/passwd")]:
                reply = call(s, "io.cordon.App.ShareDocument", {"path": path, "target": "com.example.viewer"})
                out[name] = {"error": error(reply), "reason": reply.get("parameters", {}).get("reason", "")}
            print(json.dumps(out))
            """, command: agent.sandbox(app: agent.deployment, info: info))
        // Its own file resolves (the target is what is missing), the host's does not exist for it.
        let inside = try #require(answer["inside"] as? [String: Any])
        #expect(inside["error"] as? String == "io.cordon.App.TargetNotRunning", "\(inside)")
        let host = try #require(answer["host"] as? [String: Any])
        #expect(host["error"] as? String == "io.cordon.App.Denied", "\(host)")
        #expect((host["reason"] as? String)?.hasPrefix("/etc/passwd does not resolve") == true, "\(host)")
        try await agent.daemon.stop()
    }
}
