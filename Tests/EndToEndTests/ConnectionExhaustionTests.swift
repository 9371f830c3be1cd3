import Foundation
import Testing

/// An ordinary program of the user (Python, raw sockets) tries to exhaust cordond: its memory
/// with pipelined 64 KiB calls on streaming connections, its connection slots with one process,
/// and with connections that sit idle and never register. Each attempt is bounded, and the
/// attacker gets the agent's errors. cordond, the apps and the attacker run as an ordinary user
/// outside test mode (``UserAgent``).
@Suite struct ConnectionExhaustionTests {
    /// Helpers every attack script starts with.
    static let prelude = """
        import json, os, socket, sys, threading
        PATH = sys.argv[1]
        def connect():
            s = socket.socket(socket.AF_UNIX)
            s.connect(PATH)
            return s
        def read_message(s):
            data = b""
            while not data.endswith(b"\\0"):
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    return None
                if not chunk:
                    return None
                data += chunk
            return json.loads(data[:-1])
        def call(s, method, more=False):
            s.sendall(json.dumps({"method": method, "more": more}).encode() + b"\\0")
            return read_message(s)
        def call_with(s, method, parameters):
            s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\\0")
            return read_message(s)

        """

    func attack(_ script: String, _ agent: UserAgent, _ arguments: [String] = []) async throws -> [String: Any] {
        let path = agent.home.appending("attack-\(UUID().uuidString.prefix(4)).py")
        try (Self.prelude + script).write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let result = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [UserAgent.python, path, agent.socketPath] + arguments,
            environment: agent.userEnvironment)
        #expect(result.status == 0, "the attack script failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any], "\(result.stdout)")
    }

    /// 60 connections each subscribe, then pipeline seventy 64 KiB calls that a streaming
    /// connection never serves. Before, each held 64 of them (4 MiB) before failing; now they
    /// are dropped as they arrive, and the attacker's sends all go through.
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// Registers `appId` as an app of the user and says whether it is managed.
    static let register = """
        s = connect()
        reply = call_with(s, "io.cordon.App.Register", {"appId": sys.argv[2]})
        print(json.dumps({"error": reply.get("error"), "managed": reply.get("parameters", {}).get("managed")}))
        """

    @Test func pipelinedCallsOnStreamingConnectionsCostNoMemory() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        let pid = agent.process.processIdentifier  // setpriv execs cordond: its pid
        let before = try #require(Self.status(pid, "VmRSS:"))
        let result = try await attack(
            """
            padding = "x" * (65000 - 60)
            frame = json.dumps({"method": "io.cordon.Agent.GetStatus", "parameters": {"pad": padding}}).encode() + b"\\0"
            sent, errors = [0], []
            lock = threading.Lock()
            def flood():
                s = connect()
                snapshot = call(s, "io.cordon.App.Subscribe", more=True)
                assert snapshot["parameters"]["event"]["kind"] == "State", snapshot
                try:
                    for _ in range(70):
                        s.sendall(frame)
                        with lock: sent[0] += 1
                except OSError as e:
                    with lock: errors.append(e.__class__.__name__)
                s.close()
            threads = [threading.Thread(target=flood) for _ in range(60)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(json.dumps({"sent": sent[0], "errors": errors}))
            """, agent)
        #expect(result["sent"] as? Int == 60 * 70, "every call was read (and dropped): \(result)")
        #expect((result["errors"] as? [String])?.isEmpty == true, "\(result)")
        let peak = try #require(Self.status(pid, "VmHWM:"))
        // 60 × 4 MiB = 240 MiB before; what remains is read buffers and the decoder's partial frames.
        #expect(peak - before < 64 * 1024, "cordond grew by \(peak - before) KiB under the flood")
        #expect(try await agent.cli(["status"]).stdout.contains("uninitialized"), "the agent serves on")
    }

    /// One process opens connections until refused: the 65th gets `TooManyProcessConnections`
    /// with its pid and the cap, while another program of the same user still connects.
    @Test func oneProcessIsCappedAndOthersStillGetIn() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let result = try await attack(
            """
            held, refusal = [], None
            while refusal is None and len(held) < 200:
                s = connect()
                reply = call(s, "io.cordon.Agent.GetStatus")
                if reply is not None and "error" not in reply:
                    held.append(s)
                else:
                    refusal = reply
            print(json.dumps({"held": len(held), "refusal": refusal, "pid": os.getpid()}))
            """, agent)
        #expect(result["held"] as? Int == 64)
        let refusal = try #require(result["refusal"] as? [String: Any], "\(result)")
        #expect(refusal["error"] as? String == "io.cordon.Agent.TooManyProcessConnections")
        let parameters = refusal["parameters"] as? [String: Any]
        #expect(parameters?["limit"] as? Int == 64)
        #expect(parameters?["pid"] as? Int == result["pid"] as? Int)
        let app = try await attack(Self.register, agent, ["com.example.after"])
        #expect(app["error"] is NSNull && app["managed"] as? Bool == true, "\(app)")
    }

    /// Connections that never register and then sit idle are closed with `ConnectionIdle`
    /// once the idle timeout passes (3 s here: a loaded machine must still answer the readiness
    /// check and register the app in time); an app registered as long stays.
    @Test func idleConnectionsThatNeverRegisterAreClosed() async throws {
        let agent = try await UserAgent(policy: Self.policy, arguments: ["--connection-idle-timeout", "3"])
        defer { agent.cleanUp() }
        let marks = agent.home.appending("marks")
        // The registered app: it registers (on a loaded machine it may sit out the short timeout
        // first: then it tries again, a test artefact), waits until the attack is over, then
        // reports activity on the same connection.
        async let stays = attack(
            """
            import time
            while True:
                s = connect()
                reply = call_with(s, "io.cordon.App.Register", {"appId": "com.example.stays"})
                if reply is not None and "error" not in reply:
                    break
            os.makedirs(sys.argv[2], exist_ok=True)
            open(os.path.join(sys.argv[2], "registered"), "w").close()
            while not os.path.exists(os.path.join(sys.argv[2], "attacked")):
                time.sleep(0.05)
            activity = call(s, "io.cordon.App.ReportActivity")
            print(json.dumps({"activity": activity}))
            """, agent, [marks])
        try await eventually("the app registered") {
            FileManager.default.fileExists(atPath: marks + "/registered")
        }
        let result = try await attack(
            """
            sockets = [connect() for _ in range(20)]
            for s in sockets: assert "error" not in call(s, "io.cordon.Agent.GetStatus")
            # Blocks until the agent speaks and closes: the attacker just holds on.
            closed = [read_message(s) for s in sockets]
            eof = [read_message(s) is None for s in sockets]
            print(json.dumps({"closed": closed, "eof": eof}))
            """, agent)
        _ = FileManager.default.createFile(atPath: marks + "/attacked", contents: nil)
        let closed = try #require(result["closed"] as? [[String: Any]], "\(result)")
        #expect(closed.count == 20)
        for reply in closed {
            #expect(reply["error"] as? String == "io.cordon.Agent.ConnectionIdle", "\(reply)")
            #expect((reply["parameters"] as? [String: Any])?["seconds"] as? Double == 3)
        }
        #expect((result["eof"] as? [Bool])?.allSatisfy { $0 } == true)
        // The registered app's connection is still there.
        let activity = try await stays["activity"] as? [String: Any]
        #expect(activity != nil && activity?["error"] == nil, "\(String(describing: activity))")
    }

    /// A `/proc/PID/status` field in KiB.
    static func status(_ pid: Int32, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(field) }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
