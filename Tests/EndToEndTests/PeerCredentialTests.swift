import Foundation
import Testing

/// Another user is refused: by the 0700 runtime directory, and by `SO_PEERCRED` even when
/// the permissions have been loosened by mistake. cordond runs as an ordinary user (``UserAgent``),
/// the other user is uid 65534.
@Suite struct PeerCredentialTests {
    /// A raw varlink call from Python, run as another uid with `setpriv`.
    static let client = """
        import json, socket, sys
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sys.argv[1])
        except OSError as e:
            print(json.dumps({"connect": e.__class__.__name__})); sys.exit(0)
        try:
            # The agent may already have answered and closed: the refusal comes at connect.
            s.sendall(b'{"method":"io.cordon.Agent.GetStatus"}\\0')
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk: break
            data += chunk
        replies = [json.loads(x) for x in data.split(b"\\0") if x]
        print(json.dumps({"connect": "ok", "replies": replies, "eof": True}))
        """

    func runAsNobody(socket: String) async throws -> [String: Any] {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("peer-\(UUID()).py").path
        defer { try? FileManager.default.removeItem(atPath: script) }
        try Self.client.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", script, socket])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any])
    }

    static func started() async throws -> UserAgent {
        try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
    }

    @Test func otherUserCannotReachTheSocket() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        chmod(agent.home.path, 0o755)
        let answer = try await runAsNobody(socket: agent.socketPath)
        #expect(answer["connect"] as? String == "PermissionError")
    }

    @Test func otherUserIsRefusedByPeerCredentials() async throws {
        let agent = try await Self.started()
        defer { agent.cleanUp() }
        // Simulate a misconfiguration: the directory and socket open to everyone.
        chmod(agent.home.path, 0o755)
        chmod(agent.home.appending("run"), 0o755)
        chmod(agent.socketPath, 0o666)
        let answer = try await runAsNobody(socket: agent.socketPath)
        #expect(answer["connect"] as? String == "ok")
        let replies = try #require(answer["replies"] as? [[String: Any]])
        #expect(replies.count == 1)
        #expect(replies.first?["error"] as? String == "org.varlink.service.PermissionDenied")
        #expect(replies.first?["parameters"] as? [String: Any] == nil || replies.first?["error"] != nil)
        #expect(answer["eof"] as? Bool == true, "the connection is closed after the refusal")
        #expect(agent.log.contains("connection refused: another user"))
        // The agent's own user is still served.
        let status = try await agent.cli(["status"])
        #expect(status.status == 0 && status.stdout.contains("uninitialized"), "\(status.stdout)")
    }
}
