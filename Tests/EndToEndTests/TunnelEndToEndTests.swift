import ChannelTestPeers
import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `cordon run --tunnel` with a real cordond and a real TLS upstream: the program fetches through
/// the Unix socket and the TCP port; revocation cuts an open connection and refuses new ones (a
/// same-user process trying the socket gets no byte); a bad upstream closes only its connection.
/// The pins are an admin policy file of the agent, which `cordon run` reads with
/// `io.cordon.App.GetNetworkPolicy`. The agent, `cordon run`, its program and the clients run as an
/// ordinary user outside test mode, but for the SDK channel's case (CordonKit in the test process).
@Suite struct TunnelEndToEndTests {
    struct Setup {
        let agent: UserAgent
        let pki: TestPKI
        let leaf: (certificate: String, key: String)
        let runtime: String
    }

    /// The agent run as an ordinary user outside test mode (``UserAgent``), initialized and
    /// unlocked, with the pins as root's admin policy; `cordon run`, its program and the same-user
    /// clients run as that user.
    static func setUp() async throws -> Setup {
        let pki = try TestPKI()
        let leaf = try pki.leaf("upstream", names: ["127.0.0.1"])
        let policy: [String: Any] = [
            "schema": "cordon.policy.v1",
            "apps": ["unknown": "trusted"],
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
        let text = String(decoding: try JSONSerialization.data(withJSONObject: policy), as: UTF8.self)
        let agent = try await UserAgent(policy: text)
        return Setup(agent: agent, pki: pki, leaf: leaf, runtime: agent.home.appending("rt"))
    }

    static func environment(_ setup: Setup) -> [String: String] {
        setup.agent.userEnvironment.merging(RunCommandTests.signalsOnly) { $1 }
            .merging(["CORDON_RUNTIME_DIR": setup.runtime]) { $1 }
    }

    /// `cordon run` as the user in the background with its stderr in a file; the program sleeps.
    static func startRun(_ setup: Setup, port: Int, appId: String, program: [String] = ["sleep", "1000"]) throws
        -> (Process, stderr: String)
    {
        let process = Process()
        let stderr = setup.agent.system.appending("run-\(appId).err")
        _ = FileManager.default.createFile(atPath: stderr, contents: nil)
        process.environment = environment(setup)
        process.executableURL = URL(fileURLWithPath: UserAgent.asUser[0])
        process.arguments =
            Array(UserAgent.asUser.dropFirst()) + [
                Binaries.cordon.path, "run", "--app", appId, "--tunnel", "API=https://127.0.0.1:\(port)", "--",
            ] + program
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: stderr)
        try process.run()
        return (process, stderr)
    }

    /// A same-user Python client of the tunnel's socket (`get` or `hold`).
    static func client(_ mode: String, _ socket: String) throws -> LineReader {
        try LineReader(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [
                "/usr/bin/python3", TLSPeer.peers.appendingPathComponent("tunnel_client.py").path, mode, socket,
            ])
    }

    /// A root test daemon with the pins as an admin file, for the case that drives CordonKit's
    /// channel inside the test process (only the SDK in-process can; an agent run as the user
    /// serves no root client).
    static func rootDaemon(_ pki: TestPKI, _ leaf: (certificate: String, key: String)) async throws -> DaemonProcess {
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
        try JSONSerialization.data(withJSONObject: policy).write(to: URL(fileURLWithPath: admin + "/50-network.json"))
        let daemon = try await DaemonProcess.started(root: root)
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        await client.close()
        return daemon
    }

    /// One `get` through the socket: its printed line.
    static func get(_ socket: String) async throws -> String {
        let reader = try client("get", socket)
        try await eventually("the tunnel client ends") { !reader.process.isRunning }
        return reader.snapshot.joined(separator: "\n")
    }

    @Test func theProgramFetchesThroughTheUnixSocketAndTheTCPPort() async throws {
        let setup = try await Self.setUp()
        defer { setup.agent.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let script =
            "curl -sS --unix-socket \"${CORDON_TUNNEL_API#unix:}\" http://127.0.0.1/unix"
            + " && curl -sS \"http://$CORDON_TUNNEL_API_TCP/tcp\" && echo \"$CORDON_TUNNEL_API\""
        let result = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + [
                Binaries.cordon.path, "run", "--app", "com.example.tunnel",
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
    }

    /// docs/THREAT-MODEL.md: the tunnel carries no bytes while the key is revoked.
    @Test func revocationCutsAnOpenConnectionAndRefusesNewOnes() async throws {
        let setup = try await Self.setUp()
        defer { setup.agent.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let (run, stderr) = try Self.startRun(setup, port: peer.port, appId: "com.example.cut")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        _ = try await RunCommandTests.programPID(setup.agent, appId: "com.example.cut")
        try await eventually("the tunnel serves") { try await Self.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        let held = try Self.client("hold", socket)
        defer { held.stop() }
        try await eventually("a connection is open through the tunnel") {
            held.snapshot.first == "open HTTP/1.1 200 OK"
        }
        #expect(try await setup.agent.cli(["logout"]).status == 0)
        try await eventually("the open connection is cut") { held.snapshot.last == "cut" }
        // A same-user process trying the socket while the key is revoked gets no byte.
        #expect(try await Self.get(socket) == "closed 0 bytes")
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("cordon: tunnel API: connection refused"), "\(log)")
        #expect(log.contains("logout"), "\(log)")
        let unlocked = try await setup.agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        try await eventually("the tunnel serves again") { try await Self.get(socket).hasPrefix("HTTP/1.1 200 OK") }
    }

    /// One HTTP `get` over the loopback port by a Python started with `prefix` (e.g. `setpriv` as
    /// another uid): the status line and body, or `closed <n> bytes` when no HTTP answer came.
    static func getTCP(_ port: Int, as prefix: [String]) async throws -> String {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("tcp_get-\(UUID()).py").path
        defer { try? FileManager.default.removeItem(atPath: script) }
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
        chmod(script, 0o644)
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
        defer { setup.agent.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let portFile = setup.agent.home.appending("tcp-port")
        let (run, stderr) = try Self.startRun(
            setup, port: peer.port, appId: "com.example.owner",
            program: ["sh", "-c", "echo \"${CORDON_TUNNEL_API_TCP#127.0.0.1:}\" > \(portFile); exec sleep 1000"])
        defer { kill(run.processIdentifier, SIGKILL) }
        _ = try await RunCommandTests.programPID(setup.agent, appId: "com.example.owner")
        var port = 0
        try await eventually("the program wrote the port") {
            port =
                Int(
                    (try? String(contentsOfFile: portFile, encoding: .utf8))?.trimmingCharacters(
                        in: .whitespacesAndNewlines) ?? "") ?? 0
            return port > 0
        }
        try await eventually("the tunnel serves its user") {
            try await Self.getTCP(port, as: UserAgent.asUser).hasPrefix("HTTP/1.1 200 OK")
        }
        let stranger = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        #expect(try await Self.getTCP(port, as: stranger) == "closed 0 bytes")
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("cordon: tunnel API: connection refused: 127.0.0.1:"), "\(log)")
        #expect(log.contains("belongs to uid 65534, not uid \(TestUser.uid)"), "\(log)")
        // The user is still served after the stranger was turned away.
        #expect(try await Self.getTCP(port, as: UserAgent.asUser).hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aBadUpstreamClosesOnlyItsConnection() async throws {
        let setup = try await Self.setUp()
        defer { setup.agent.cleanUp() }
        // The first connection gets bytes that are not TLS, the next ones a real server.
        let peer = try TLSPeer(mode: "flaky", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let (run, stderr) = try Self.startRun(setup, port: peer.port, appId: "com.example.flaky")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        _ = try await RunCommandTests.programPID(setup.agent, appId: "com.example.flaky")
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
    }

    /// CordonKit's `app.secureChannel()` with the pins the agent answers: the pinned server gives
    /// 200; a server of the same CA with another key is refused naming the admin's file and pointer
    /// (docs/THREAT-MODEL.md: a valid chain is not enough); after a logout no request is made.
    @Test func theSDKChannelEnforcesTheAdminsPinsAndFollowsTheKey() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("upstream", names: ["127.0.0.1"])
        let daemon = try await Self.rootDaemon(pki, leaf)
        defer { daemon.cleanUp() }
        let pinned = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { pinned.stop() }
        let other = try pki.leaf("other", names: ["127.0.0.1"])
        let impostor = try TLSPeer(mode: "www", certificate: other.certificate, key: other.key)
        defer { impostor.stop() }
        let app = try await CordonApp.connect(appId: "com.example.sdk", socketPath: daemon.socketPath)
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
            #expect(expected == [try pki.pin(leaf.certificate)])
        }
        let client = try await daemon.client()
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
        try await daemon.stop()
    }
}
