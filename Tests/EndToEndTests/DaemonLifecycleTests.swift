import Foundation
import Testing

/// The daemon process: graceful shutdown, its socket, and the service manager protocol. cordond,
/// the CLI and the apps run as an ordinary user outside test mode (``UserAgent``).
@Suite struct DaemonLifecycleTests {
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// An app that registers, hardens, subscribes and writes each event (kind, reason) as a JSON
    /// line to the file `sys.argv[2]` until the agent's end closes.
    static let subscriber = """
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.shutdown"})
        harden()
        events = connect(sys.argv[1])
        events.sendall(json.dumps({"method": "io.cordon.App.Subscribe", "parameters": {}, "more": True}).encode() + b"\\0")
        out = open(sys.argv[2], "w", buffering=1)
        data = b""
        while True:
            chunk = events.recv(65536)
            if not chunk:
                break
            data += chunk
            while b"\\0" in data:
                frame, data = data.split(b"\\0", 1)
                reply = json.loads(frame)
                event = reply.get("parameters", {}).get("event", {})
                out.write(json.dumps({"error": reply.get("error"), "kind": event.get("kind"),
                                      "reason": event.get("reason"), "state": event.get("state")}) + "\\n")
        out.write(json.dumps({"eof": True}) + "\\n")
        print(json.dumps({"done": True}))
        """

    @Test func sigtermRevokesAndTellsEveryApp() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let events = agent.home.appending("events.jsonl")
        async let subscriber = agent.attack(Self.subscriber, [events])
        let lines: @Sendable () -> [[String: Any]] = {
            let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        try await eventually("the app hears the first event") { !lines().isEmpty }
        let first = try #require(lines().first)
        #expect(first["kind"] as? String == "State" && first["state"] as? String == "unlocked", "\(first)")

        #expect(agent.terminate(signal: SIGTERM) == 0)
        _ = try await subscriber
        let after = lines().dropFirst()
        #expect(after.last?["eof"] as? Bool == true, "the connection ends: \(after)")
        let kinds = after.compactMap { $0["kind"] as? String }
        let reasons = after.compactMap { $0["reason"] as? String }
        #expect(kinds == ["DidLock", "EncryptionKeyUnavailable"], "\(after)")
        #expect(reasons == ["shutdown", "shutdown"], "\(after)")
        #expect(!FileManager.default.fileExists(atPath: agent.socketPath), "the socket is removed")
        #expect(agent.log.contains("key discarded"))
    }

    /// Refused several times over: a refused start exits 1 each time, never crashing on its way out
    /// while the work it had begun (the fleet directory's first read) completes.
    /// The store thread runs below the loop (docs/ARCHITECTURE.md, "Threads and confinement"):
    /// the running agent's threads, as the kernel records their nice values.
    @Test func theStoreThreadYieldsToTheLoop() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        let tasks = "/proc/\(agent.daemonPID)/task"
        let threads = try FileManager.default.contentsOfDirectory(atPath: tasks).map { tid in
            let stat = try String(contentsOfFile: "\(tasks)/\(tid)/stat", encoding: .utf8)
            let name = stat.split(separator: "(", maxSplits: 1)[1].split(separator: ")")[0]
            let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
            return (name: String(name), nice: try #require(Int(fields[16])))
        }
        #expect(threads.filter { $0.nice == 5 }.map(\.name) == ["TP-#0"], "\(threads)")
        #expect(threads.filter { $0.name.hasPrefix("NIO-ELT") }.allSatisfy { $0.nice == 0 }, "\(threads)")
    }

    @Test func liveSocketIsNeverStolen() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        for attempt in 1...8 {
            let second = try await agent.startAgain()
            #expect(second.status == 1, "attempt \(attempt): the second daemon refuses to start: \(second.stderr)")
            #expect(second.stderr.contains("another agent is already listening"), "\(second.stderr)")
        }
        #expect(try await agent.cli(["status"]).stdout.contains("uninitialized"))
    }

    @Test func staleSocketIsReplaced() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        agent.stop()
        #expect(FileManager.default.fileExists(atPath: agent.socketPath), "kill -9 leaves the socket behind")
        try await agent.restart()
        #expect(try await agent.cli(["status"]).stdout.contains("uninitialized"))
        let attributes = try FileManager.default.attributesOfItem(atPath: agent.socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: agent.home.appending("run"))
        #expect((directory[.posixPermissions] as? Int) == 0o700)
    }

    static let notifyListener = """
        import json, os, socket, sys
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        open(path + ".ready", "w").close()
        s.settimeout(60)
        messages = []
        while not any("STOPPING=1" in m for m in messages):
            messages.append(s.recv(4096).decode())
        print(json.dumps(messages))
        """

    /// The service manager's socket is the user's (systemd --user's); the listener runs as the user.
    @Test func notifiesTheServiceManager() async throws {
        let listenerHome = try TemporaryDirectory()
        defer { listenerHome.remove() }
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)", listenerHome.path])
        let script = listenerHome.appending("notify.py")
        try Self.notifyListener.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let notifySocket = listenerHome.appending("notify.sock")
        async let listener = runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + ["/usr/bin/python3", script, notifySocket])
        try await eventually("the listener is bound") {
            FileManager.default.fileExists(atPath: notifySocket + ".ready")
        }
        let agent = try await UserAgent(
            policy: Self.policy, initialize: false, environment: ["NOTIFY_SOCKET": notifySocket])
        defer { agent.cleanUp() }
        #expect(agent.terminate() == 0)
        let result = try await listener
        let messages = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String]
        let all = try #require(messages, "\(result.stderr)").joined(separator: "\n")
        #expect(all.contains("READY=1"))
        #expect(all.contains("STATUS=state: uninitialized"))
        #expect(all.contains("STOPPING=1"))
    }
}
