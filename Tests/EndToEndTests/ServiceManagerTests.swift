import Foundation
import Testing

/// `Type=notify` against a test `NOTIFY_SOCKET` listener: readiness, status, watchdog, stopping.
/// cordond, the CLI and the listener (systemd --user's part) run as an ordinary user
/// (``UserAgent``).
@Suite struct ServiceManagerTests {
    /// Appends every datagram to `<socket>.log` as it arrives (one JSON string per line).
    static let listener = """
        import json, socket, sys
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        open(path + ".ready", "w").close()
        s.settimeout(60)
        with open(path + ".log", "a") as out:
            while True:
                message = s.recv(4096).decode()
                out.write(json.dumps(message) + "\\n"); out.flush()
                if "STOPPING=1" in message: break
        """

    /// The datagrams received so far.
    static func messages(_ notifySocket: String) -> [String] {
        let text = (try? String(contentsOfFile: notifySocket + ".log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed) as? String
        }
    }

    @Test func watchdogPingsAndStatusFollowsTheLockState() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)", root.path])
        let script = root.appending("notify.py")
        try Self.listener.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let notifySocket = root.appending("notify.sock")
        async let listener = runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + ["/usr/bin/python3", script, notifySocket])
        try await eventually("the listener is bound") {
            FileManager.default.fileExists(atPath: notifySocket + ".ready")
        }
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            environment: ["NOTIFY_SOCKET": notifySocket, "WATCHDOG_USEC": "200000"])
        defer { agent.cleanUp() }
        try await eventually("READY=1 with the status") {
            Self.messages(notifySocket).contains {
                $0.contains("READY=1") && $0.contains("STATUS=state: uninitialized")
            }
        }
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: UserAgent.passcode + "\n").status == 0)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n").status == 0)
        try await eventually("STATUS follows the unlock") {
            Self.messages(notifySocket).contains { $0.contains("STATUS=state: unlocked") }
        }
        #expect(try await agent.cli(["lock"]).status == 0)
        try await eventually("STATUS follows the lock") {
            Self.messages(notifySocket).contains { $0.contains("STATUS=state: locked") }
        }
        try await eventually("repeated WATCHDOG=1 pings") {
            Self.messages(notifySocket).filter { $0 == "WATCHDOG=1" }.count >= 3
        }
        #expect(agent.log.contains("watchdog pings enabled"))
        #expect(agent.terminate() == 0)
        let result = try await listener
        #expect(result.status == 0, "\(result.stderr)")
        let all = Self.messages(notifySocket)
        #expect(all.last?.contains("STOPPING=1") == true)
        let statuses = all.filter { $0.hasPrefix("STATUS=") }
        #expect(Set(statuses).count == statuses.count, "a status is sent only when it changes: \(statuses)")
    }
}
