import CordonKit
import CordonProtocol
import Foundation
import Testing

/// An ordinary program of the user (Python, raw sockets) tries to exhaust cordond: its memory
/// with pipelined 64 KiB calls on streaming connections, its connection slots with one process,
/// and with connections that sit idle and never register. Each attempt is bounded, and the
/// attacker gets the agent's errors.
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

        """

    func attack(_ script: String, _ daemon: DaemonProcess, _ arguments: [String] = []) async throws -> [String: Any] {
        let path = daemon.root.appending("attack-\(UUID().uuidString.prefix(4)).py")
        try (Self.prelude + script).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"), [path, daemon.socketPath] + arguments)
        #expect(result.status == 0, "the attack script failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any], "\(result.stdout)")
    }

    /// 60 connections each subscribe, then pipeline seventy 64 KiB calls that a streaming
    /// connection never serves. Before, each held 64 of them (4 MiB) before failing; now they
    /// are dropped as they arrive, and the attacker's sends all go through.
    @Test func pipelinedCallsOnStreamingConnectionsCostNoMemory() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let before = try #require(Self.status(daemon.pid, "VmRSS:"))
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
            """, daemon)
        #expect(result["sent"] as? Int == 60 * 70, "every call was read (and dropped): \(result)")
        #expect((result["errors"] as? [String])?.isEmpty == true, "\(result)")
        let peak = try #require(Self.status(daemon.pid, "VmHWM:"))
        // 60 × 4 MiB = 240 MiB before; what remains is read buffers and the decoder's partial frames.
        #expect(peak - before < 64 * 1024, "cordond grew by \(peak - before) KiB under the flood")
        let client = try await daemon.client()
        #expect(try await client.status().state == .uninitialized, "the agent serves on")
        await client.close()
        try await daemon.stop()
    }

    /// One process opens connections until refused: the 65th gets `TooManyProcessConnections`
    /// with its pid and the cap, while another program of the same user still connects.
    @Test func oneProcessIsCappedAndOthersStillGetIn() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
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
            """, daemon)
        #expect(result["held"] as? Int == 64)
        let refusal = try #require(result["refusal"] as? [String: Any], "\(result)")
        #expect(refusal["error"] as? String == "io.cordon.Agent.TooManyProcessConnections")
        let parameters = refusal["parameters"] as? [String: Any]
        #expect(parameters?["limit"] as? Int == 64)
        #expect(parameters?["pid"] as? Int == result["pid"] as? Int)
        let app = try await CordonApp.connect(appId: "com.example.after", socketPath: daemon.socketPath)
        #expect(app.managed)
        await app.close()
        try await daemon.stop()
    }

    /// Connections that never register and then sit idle are closed with `ConnectionIdle`
    /// once the idle timeout passes (3 s here: a loaded machine must still answer the readiness
    /// check and register the app in time); an app registered as long stays.
    @Test func idleConnectionsThatNeverRegisterAreClosed() async throws {
        let daemon = try await DaemonProcess.started(arguments: ["--connection-idle-timeout", "3"])
        defer { daemon.cleanUp() }
        // On a loaded machine the app's connections may sit out the short timeout before they
        // register and subscribe: then it tries again (a test artefact of a 1-second timeout).
        var registered: CordonApp?
        try await eventually("the app registers") {
            do {
                registered = try await CordonApp.connect(appId: "com.example.stays", socketPath: daemon.socketPath)
            } catch CordonError.connectionIdle {}
            return registered != nil
        }
        let app = try #require(registered)
        let result = try await attack(
            """
            sockets = [connect() for _ in range(20)]
            for s in sockets: assert "error" not in call(s, "io.cordon.Agent.GetStatus")
            # Blocks until the agent speaks and closes: the attacker just holds on.
            closed = [read_message(s) for s in sockets]
            eof = [read_message(s) is None for s in sockets]
            print(json.dumps({"closed": closed, "eof": eof}))
            """, daemon)
        let closed = try #require(result["closed"] as? [[String: Any]], "\(result)")
        #expect(closed.count == 20)
        for reply in closed {
            #expect(reply["error"] as? String == "io.cordon.Agent.ConnectionIdle", "\(reply)")
            #expect((reply["parameters"] as? [String: Any])?["seconds"] as? Double == 3)
        }
        #expect((result["eof"] as? [Bool])?.allSatisfy { $0 } == true)
        try await app.reportActivity()  // the registered app's connection is still there
        await app.close()
        try await daemon.stop()
    }

    /// A `/proc/PID/status` field in KiB.
    static func status(_ pid: Int32, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(field) }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
