import Foundation
import Testing

/// Runs an attacker: an ordinary same-user Python program speaking varlink to the agent, and
/// returns the JSON object it prints (docs/THREAT-MODEL.md: every guarantee is tested this way).
enum AttackScript {
    /// A raw varlink client the scripts share: `call(sock, method, parameters)` returns the reply
    /// object (`error` set when the agent refused), `connect(path)` opens a socket, `harden()`
    /// makes the script non-dumpable as CordonKit makes an app once it has registered.
    static let prelude = """
        import json, os, socket, sys
        def connect(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        def call(s, method, parameters=None):
            s.sendall(json.dumps({"method": method, "parameters": parameters or {}}).encode() + b"\\0")
            data = b""
            while not data.endswith(b"\\0"):
                chunk = s.recv(65536)
                if not chunk:
                    return {"error": "closed"}
                data += chunk
            return json.loads(data[:-1].decode())
        def error(reply):
            return reply.get("error")
        def harden():
            # What CordonKit does once registered: no process of this user may trace it or read
            # its memory from now on, so the agent may hand it a key (prctl PR_SET_DUMPABLE 0).
            import ctypes
            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        """

    /// Runs `body` (Python, after the prelude) with `arguments` (`sys.argv[1:]`) and returns what it
    /// printed as JSON. `command` runs the script instead of `$PYTHON`: a Python interpreter,
    /// possibly behind `setpriv`, `unshare` or `bwrap` (its last element is the interpreter).
    static func run(
        _ body: String, _ arguments: [String], in directory: TemporaryDirectory, environment: [String: String] = [:],
        command: [String]? = nil
    ) async throws -> [String: Any] {
        let script = directory.appending("attack-\(UUID().uuidString.prefix(6)).py")
        try (prelude + "\n" + body).write(toFile: script, atomically: true, encoding: .utf8)
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        let program = command ?? ["/usr/bin/env", python]
        let result = try await runCommand(
            URL(fileURLWithPath: program[0]), Array(program.dropFirst()) + [script] + arguments,
            environment: environment)
        try #require(result.status == 0, "the attack script failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object, "the attack script printed no JSON object: \(result.stdout)")
    }
}
