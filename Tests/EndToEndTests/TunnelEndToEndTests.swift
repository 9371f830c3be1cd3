import ChannelTestPeers
import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `cordon run --tunnel` with a real cordond and a real TLS upstream: the program fetches through
/// the Unix socket and the TCP port; revocation cuts an open connection and refuses new ones (a
/// same-user process trying the socket gets no byte); a bad upstream closes only its connection.
/// The pins are an admin policy file of the agent, which `cordon run` reads with
/// `io.cordon.App.GetNetworkPolicy`.
@Suite struct TunnelEndToEndTests {
    struct Setup {
        let daemon: DaemonProcess
        let pki: TestPKI
        let leaf: (certificate: String, key: String)
        let policyFile: String
        let runtime: String
    }

    static func setUp() async throws -> Setup {
        let pki = try TestPKI()
        let leaf = try pki.leaf("upstream", names: ["127.0.0.1"])
        let root = try TemporaryDirectory()
        let admin = root.appending("admin")
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        let policy: [String: Any] = [
            "schema": "cordon.policy.v1",
            "network": [
                "pins": [
                    [
                        "hosts": ["127.0.0.1"], "pinSha256": [try pki.pin(leaf.certificate)],
                        "caCertificates": [pki.caPEM],
                    ]
                ],
                "unpinnedHosts": "deny",
            ],
        ]
        let policyFile = admin + "/50-network.json"
        try JSONSerialization.data(withJSONObject: policy).write(to: URL(fileURLWithPath: policyFile))
        let daemon = try await DaemonProcess.started(root: root)
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        await client.close()
        let runtime = daemon.root.appending("rt")
        return Setup(daemon: daemon, pki: pki, leaf: leaf, policyFile: policyFile, runtime: runtime)
    }

    static func environment(_ setup: Setup) -> [String: String] {
        RunCommandTests.signalsOnly.merging(["CORDON_RUNTIME_DIR": setup.runtime]) { $1 }
    }

    /// `cordon run` in the background with its stderr in a file; the program sleeps.
    static func startRun(_ setup: Setup, port: Int, appId: String, program: [String] = ["sleep", "1000"]) throws
        -> (Process, stderr: String)
    {
        let process = Process()
        let stderr = setup.daemon.root.appending("run-\(appId).err")
        FileManager.default.createFile(atPath: stderr, contents: nil)
        process.environment = ProcessInfo.processInfo.environment.merging(environment(setup)) { $1 }
        process.executableURL = Binaries.cordon
        process.arguments =
            [
                "--socket", setup.daemon.socketPath, "run", "--app", appId, "--tunnel", "API=https://127.0.0.1:\(port)",
                "--",
            ] + program
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: stderr)
        try process.run()
        return (process, stderr)
    }

    static func client(_ mode: String, _ socket: String) throws -> LineReader {
        try LineReader(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", TLSPeer.peers.appendingPathComponent("tunnel_client.py").path, mode, socket])
    }

    /// One `get` through the socket: its printed line.
    static func get(_ socket: String) async throws -> String {
        let reader = try client("get", socket)
        try await eventually("the tunnel client ends") { !reader.process.isRunning }
        return reader.snapshot.joined(separator: "\n")
    }

    @Test func theProgramFetchesThroughTheUnixSocketAndTheTCPPort() async throws {
        let setup = try await Self.setUp()
        defer { setup.daemon.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let script =
            "curl -sS --unix-socket \"${CORDON_TUNNEL_API#unix:}\" http://127.0.0.1/unix"
            + " && curl -sS \"http://$CORDON_TUNNEL_API_TCP/tcp\" && echo \"$CORDON_TUNNEL_API\""
        let result = try await runCommand(
            Binaries.cordon,
            [
                "--socket", setup.daemon.socketPath, "run", "--app", "com.example.tunnel",
                "--tunnel", "api=https://127.0.0.1:\(peer.port)",
                "--", "sh", "-c", script,
            ], environment: Self.environment(setup))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(2)) == ["hello /unix", "hello /tcp"], "\(result.stdout) \(result.stderr)")
        // The socket is in a 0700 directory of its own under the runtime directory, removed at the end.
        let socket = String(lines.last?.dropFirst("unix:".count) ?? "")
        #expect(socket.hasPrefix(setup.runtime + "/tunnels/run-") && socket.hasSuffix("/api.sock"))
        #expect(!FileManager.default.fileExists(atPath: socket))
        try await setup.daemon.stop()
    }

    /// docs/THREAT-MODEL.md: the tunnel carries no bytes while the key is revoked.
    @Test func revocationCutsAnOpenConnectionAndRefusesNewOnes() async throws {
        let setup = try await Self.setUp()
        defer { setup.daemon.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let (run, stderr) = try Self.startRun(setup, port: peer.port, appId: "com.example.cut")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        let client = try await setup.daemon.client()
        _ = try await RunCommandTests.programPID(client, appId: "com.example.cut")
        try await eventually("the tunnel serves") { try await Self.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        let held = try Self.client("hold", socket)
        defer { held.stop() }
        try await eventually("a connection is open through the tunnel") {
            held.snapshot.first == "open HTTP/1.1 200 OK"
        }
        try await client.logout()
        try await eventually("the open connection is cut") { held.snapshot.last == "cut" }
        // A same-user process trying the socket while the key is revoked gets no byte.
        #expect(try await Self.get(socket) == "closed 0 bytes")
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("cordon: tunnel API: connection refused"), "\(log)")
        #expect(log.contains("logout"), "\(log)")
        try await client.unlock(passcode: "2468")
        try await eventually("the tunnel serves again") { try await Self.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        await client.close()
        try await setup.daemon.stop()
    }

    /// One HTTP `get` over the loopback port by a Python started with `prefix` (e.g. `setpriv` as
    /// another uid): the status line and body, or `closed <n> bytes` when no HTTP answer came.
    static func getTCP(_ port: Int, as prefix: [String], in root: TemporaryDirectory) async throws -> String {
        let script = root.appending("tcp_get.py")
        try """
        import socket, sys
        conn = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        data = b""
        try:
            conn.sendall(b"GET /tcp HTTP/1.1\\r\\nHost: tunnel\\r\\nConnection: close\\r\\n\\r\\n")
            while True:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        head, _, body = data.partition(b"\\r\\n\\r\\n")
        if not data.startswith(b"HTTP/"):
            print("closed %d bytes" % len(data))
        else:
            print(head.split(b"\\r\\n")[0].decode(), body.decode().strip())
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let command = prefix + ["/usr/bin/python3", script, "\(port)"]
        let result = try await runCommand(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// docs/THREAT-MODEL.md, "The tunnel serves only its user": a process of another uid
    /// connecting to the loopback port gets the connection closed with no byte from upstream (its
    /// uid on the tunnel's stderr); the tunnel's own user is served.
    @Test(.enabled(if: getuid() == 0, "needs root to connect as another uid"))
    func theLoopbackPortServesOnlyItsUser() async throws {
        let setup = try await Self.setUp()
        defer { setup.daemon.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let portFile = setup.daemon.root.appending("tcp-port")
        let (run, stderr) = try Self.startRun(
            setup, port: peer.port, appId: "com.example.owner",
            program: ["sh", "-c", "echo \"${CORDON_TUNNEL_API_TCP#127.0.0.1:}\" > \(portFile); exec sleep 1000"])
        defer { kill(run.processIdentifier, SIGKILL) }
        let client = try await setup.daemon.client()
        _ = try await RunCommandTests.programPID(client, appId: "com.example.owner")
        await client.close()
        var port = 0
        try await eventually("the program wrote the port") {
            port =
                Int(
                    (try? String(contentsOfFile: portFile, encoding: .utf8))?.trimmingCharacters(
                        in: .whitespacesAndNewlines) ?? "") ?? 0
            return port > 0
        }
        try await eventually("the tunnel serves its user") {
            try await Self.getTCP(port, as: [], in: setup.daemon.root).hasPrefix("HTTP/1.1 200 OK")
        }
        let stranger = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        #expect(try await Self.getTCP(port, as: stranger, in: setup.daemon.root) == "closed 0 bytes")
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("cordon: tunnel API: connection refused: 127.0.0.1:"), "\(log)")
        #expect(log.contains("belongs to uid 65534, not uid 0"), "\(log)")
        // The user is still served after the stranger was turned away.
        #expect(try await Self.getTCP(port, as: [], in: setup.daemon.root).hasPrefix("HTTP/1.1 200 OK"))
        try await setup.daemon.stop()
    }

    @Test func aBadUpstreamClosesOnlyItsConnection() async throws {
        let setup = try await Self.setUp()
        defer { setup.daemon.cleanUp() }
        // The first connection gets bytes that are not TLS, the next ones a real server.
        let peer = try TLSPeer(mode: "flaky", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let (run, stderr) = try Self.startRun(setup, port: peer.port, appId: "com.example.flaky")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        let client = try await setup.daemon.client()
        _ = try await RunCommandTests.programPID(client, appId: "com.example.flaky")
        try await eventually("the socket exists") { FileManager.default.fileExists(atPath: socket) }
        // Until the key's state reaches the tunnel a connection is refused before the upstream; every
        // attempt up to the one the bad upstream answered closes without a byte.
        var answers: [String] = []
        try await eventually("a connection reached the bad upstream") {
            answers.append(try await Self.get(socket))
            return (try String(contentsOfFile: stderr, encoding: .utf8)).contains("handshake")
        }
        #expect(answers.allSatisfy { $0 == "closed 0 bytes" }, "\(answers)")
        let log = try String(contentsOfFile: stderr, encoding: .utf8)
        #expect(
            log.contains("cordon: tunnel API: 127.0.0.1:\(peer.port): 127.0.0.1: the TLS handshake failed"), "\(log)")
        #expect(try await Self.get(socket) == "HTTP/1.1 200 OK hello /get")
        await client.close()
        try await setup.daemon.stop()
    }

    /// CordonKit's `app.secureChannel()` with the pins the agent answers: the pinned server gives
    /// 200; a server of the same CA with another key is refused naming the admin's file and pointer
    /// (docs/THREAT-MODEL.md: a valid chain is not enough); after a logout no request is made.
    @Test func theSDKChannelEnforcesTheAdminsPinsAndFollowsTheKey() async throws {
        let setup = try await Self.setUp()
        defer { setup.daemon.cleanUp() }
        let pinned = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { pinned.stop() }
        let other = try setup.pki.leaf("other", names: ["127.0.0.1"])
        let impostor = try TLSPeer(mode: "www", certificate: other.certificate, key: other.key)
        defer { impostor.stop() }
        let app = try await CordonApp.connect(appId: "com.example.sdk", socketPath: setup.daemon.socketPath)
        let channel = try await app.secureChannel()
        let response = try await channel.request(url: "https://127.0.0.1:\(pinned.port)/sdk")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("hello /sdk"))
        do {
            _ = try await channel.request(url: "https://127.0.0.1:\(impostor.port)/sdk")
            Issue.record("a server with another key was accepted")
        } catch {
            guard case .pinMismatch(let host, let pattern, let source, let expected, _) = error else {
                Issue.record("expected pinMismatch, got \(error)")
                return
            }
            #expect(host == "127.0.0.1" && pattern == "127.0.0.1")
            #expect(source.hasSuffix("50-network.json#/network/pins/0"), "\(source)")
            #expect(expected == [try setup.pki.pin(setup.leaf.certificate)])
        }
        let client = try await setup.daemon.client()
        try await client.logout()
        try await eventually("the channel refuses while the key is revoked") {
            do {
                _ = try await channel.request(url: "https://127.0.0.1:\(pinned.port)/sdk")
                return false
            } catch let error as SecureChannelError {
                if case .keyUnavailable(let appId, _) = error { return appId == "com.example.sdk" }
                return false
            }
        }
        await client.close()
        await app.close()
        try await setup.daemon.stop()
    }
}
