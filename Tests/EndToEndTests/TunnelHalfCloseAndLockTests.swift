import ChannelTestPeers
import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Issue #32 through `cordon run --tunnel` with a real cordond (run as the ordinary user):
/// TCP half-close passes through the tunnel (socat on both ends), and `cordon lock` with the key
/// held refuses new tunnel connections under the default `network.onLock: refuseNew`, while an
/// open one goes on.
@Suite struct TunnelHalfCloseAndLockTests {
    typealias Tunnels = TunnelEndToEndTests

    /// `socat` serving TLS on a free port with `setup.leaf`, answering each connection with the
    /// byte count of what it read (`wc -c`) once the client stopped sending.
    final class CountingServer {
        let process = Process()
        let port: Int

        init(_ setup: Tunnels.Setup) throws {
            port = try TestPorts.free()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
            process.arguments = [
                "-d", "-d",
                "OPENSSL-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork,verify=0,"
                    + "cert=\(setup.leaf.certificate),key=\(setup.leaf.key)",
                "SYSTEM:wc -c",
            ]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            var text = ""
            while !text.contains("listening on") {
                let chunk = errors.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw ChannelCommand.Failure(description: "socat did not start: \(text)") }
                text += String(decoding: chunk, as: UTF8.self)
            }
        }

        /// SIGKILL: a test process that ignores SIGTERM passes that on.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// A client that shuts down its write side (socat, at the end of its stdin) still receives
    /// the server's reply through the tunnel.
    @Test func aClientThatStopsSendingStillGetsTheReply() async throws {
        let setup = try await Tunnels.setUp()
        defer { setup.agent.cleanUp() }
        let server = try CountingServer(setup)
        defer { server.stop() }
        let (run, stderr) = try Tunnels.startRun(setup, port: server.port, appId: "com.example.halfclose")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        _ = try await RunCommandTests.programPID(setup.agent, appId: "com.example.halfclose")
        var replies: [String] = []
        do {
            try await eventually("the reply comes back after the client stopped sending") {
                let result = try await runCommand(
                    URL(fileURLWithPath: UserAgent.asUser[0]),
                    Array(UserAgent.asUser.dropFirst()) + [
                        "/usr/bin/socat", "-t", "30", "-", "UNIX-CONNECT:\(socket)",
                    ],
                    input: "hello world", environment: Tunnels.environment(setup))
                replies.append(result.stdout)
                return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "11"
            }
        } catch {
            let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
            Issue.record("\(error): replies \(replies.suffix(3)), cordon run: \(log)")
        }
    }

    /// `cordon lock` keeps the key (the default) and `network.onLock` is `refuseNew` (the
    /// default): a same-user process gets no byte through the tunnel while locked, the open
    /// connection goes on, and the unlock serves again. The user's own policy file saying
    /// `network.onLock: keep` (the attack: loosen it to keep the tunnel open while locked) changes
    /// nothing: the strictest file wins.
    @Test func aLockRefusesNewTunnelConnections() async throws {
        let setup = try await Tunnels.setUp()
        defer { setup.agent.cleanUp() }
        let peer = try TLSPeer(mode: "www", certificate: setup.leaf.certificate, key: setup.leaf.key)
        defer { peer.stop() }
        let policies = setup.agent.home.appending("config/policy.d")
        try await NobodyAgent.run(
            TestUser.asUser + [
                "/bin/sh", "-c", "mkdir -p \"$0\" && echo \"$1\" > \"$0/50-keep.json\"", policies,
                #"{"schema": "cordon.policy.v1", "network": {"onLock": "keep"}}"#,
            ])
        let reload = try await setup.agent.cli(["policy", "reload"])
        #expect(reload.status == 0, "\(reload.stdout) \(reload.stderr)")
        // The user's file is in force (not refused), so the lock below is tested against it.
        let keepLine = reload.stdout.split(separator: "\n").first { $0.contains("50-keep.json") }
        #expect(keepLine.map { !$0.contains("REJECTED") } == true, "\(reload.stdout)")
        let (run, stderr) = try Tunnels.startRun(setup, port: peer.port, appId: "com.example.locked")
        defer { kill(run.processIdentifier, SIGKILL) }
        let socket = setup.runtime + "/tunnels/run-\(run.processIdentifier)/API.sock"
        _ = try await RunCommandTests.programPID(setup.agent, appId: "com.example.locked")
        try await eventually("the tunnel serves") { try await Tunnels.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        let held = try Tunnels.client("hold", socket)
        defer { held.stop() }
        try await eventually("a connection is open through the tunnel") {
            held.snapshot.first == "open HTTP/1.1 200 OK"
        }
        #expect(try await setup.agent.cli(["lock"]).status == 0)
        try await eventually("a new connection gets no byte") { try await Tunnels.get(socket) == "closed 0 bytes" }
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        #expect(log.contains("network.onLock: refuseNew"), "\(log)")
        #expect(held.snapshot.count == 1, "the open connection is not cut: \(held.snapshot)")
        let unlocked = try await setup.agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        try await eventually("the tunnel serves again") { try await Tunnels.get(socket).hasPrefix("HTTP/1.1 200 OK") }
        // The held connection ends with the run (its client then ends by itself).
        kill(run.processIdentifier, SIGKILL)
        try await eventually("the held client ends") { !held.process.isRunning }
    }
}
