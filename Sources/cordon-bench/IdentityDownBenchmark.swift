import ArgumentParser
import CordonBenchSummary
import Foundation

/// `cordon-bench identity-down`: identity with a provider that is down (issue #31;
/// docs/components/identity.md, "Background renewal and backoff"), in one run.
///
/// GetToken: a domain whose provider is stopped (its port refuses) and whose token is valid but
/// due for a refresh (the local authlib provider's 30 s tokens are always within the 60 s
/// margin) against, interleaved on the same connection, a domain whose provider is up and whose
/// token is not due; the target is what the dead provider adds to the median round trip. Each run
/// signs in to a new instance of the dead provider on the same port, then stops it: the first
/// call starts the refresh beside its answer, the refusal sets the backoff, and the measured
/// calls follow (a 30 s token would not outlive five runs).
/// Login: `cordon login --provider down` to the stopped provider, the process timed from start to
/// exit (its error checked: "… was refused"); beside it `cordon login --provider nope`, which the
/// agent refuses without a provider (the command's own cost), and the `SignIn` call alone over
/// the socket.
/// `cordon logout --identity` with the run's session, the revocation refused, ends each run.
struct IdentityDownBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity-down",
        abstract: "GetToken with a valid token while its provider is down, and login to a port that refuses.")

    @Option(help: "GetToken calls measured per side and run.")
    var iterations = 2000
    @Option(help: "`cordon login` runs timed per run.")
    var logins = 5
    @Option(help: "Runs (the spread is across runs).")
    var runs = 5
    @Option(help: "The identity test peers (identity_provider.py, authlib and Flask).")
    var peers = "Tests/CordonIdentityTests/peers"
    @OptionGroup var summary: SummaryOption

    /// What a provider that is down may add to a `GetToken` with a valid token (issue #31).
    static let addedTargetMicroseconds = 1000.0
    /// How long `cordon login` to a port that refuses may take to fail (issue #31).
    static let loginTargetMilliseconds = 100.0

    func run() throws {
        let cordon = URL(fileURLWithPath: DaemonLauncher.cordondPath).deletingLastPathComponent()
            .appendingPathComponent("cordon").path
        guard FileManager.default.isExecutableFile(atPath: cordon) else {
            throw BenchError.daemon("no \(cordon): build the cordon product next to cordon-bench")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-identity-down-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let up = try LocalIdentityProvider(peers: peers)
        defer { up.stop() }
        let downPort = try FleetBenchNginx.freePort()
        let policy = directory + "/10-bench-identity-down.json"
        try IdentityBenchmark.policy(
            providers: [("up", up.port), ("down", downPort)], apps: [IdentityBenchmark.appId]
        ).write(toFile: policy, atomically: true, encoding: .utf8)
        let agent = try BenchAgent(
            directory: directory + "/agent", adminPolicies: [policy], arguments: ["--identity-poll-delay", "0.02"])
        defer { agent.stop() }
        try IdentityBenchmark.signIn(agent, "up", up)
        let app = try VarlinkConnection(path: agent.socket)
        try app.call("io.cordon.App.Register", ["appId": IdentityBenchmark.appId])
        let session = Session(app: app, peers: peers, port: downPort, agent: agent)
        var measured = Measured()
        for _ in 0..<runs {
            try session.signInThenStop()
            try measure(session, into: &measured)
            for _ in 0..<logins {
                measured.loginMilliseconds.append(try Self.login(cordon, socket: agent.socket))
                measured.unknownMilliseconds.append(try Self.unknownLogin(cordon, socket: agent.socket))
            }
            measured.loginRuns.append(Self.median(Array(measured.loginMilliseconds.suffix(logins))))
            measured.signInMilliseconds.append(try session.signInCall())
            measured.logoutMilliseconds.append(try Self.logout(cordon, socket: agent.socket, port: downPort))
        }
        try report(measured)
    }

    /// Every figure of the runs.
    struct Measured {
        var down: [LatencyStats] = []
        var up: [LatencyStats] = []
        var firstMicroseconds: [Double] = []
        var loginMilliseconds: [Double] = []
        var loginRuns: [Double] = []
        var signInMilliseconds: [Double] = []
        var unknownMilliseconds: [Double] = []
        var logoutMilliseconds: [Double] = []
    }

    /// One run of GetToken: the first call after the stop (it starts the refresh), then both
    /// domains interleaved; every reply must carry a token.
    func measure(_ session: Session, into measured: inout Measured) throws {
        let app = session.app
        let downCall = try VarlinkConnection.encode(
            method: "io.cordon.Identity.GetToken", parameters: ["domain": "down.example"], more: false)
        let upCall = try VarlinkConnection.encode(
            method: "io.cordon.Identity.GetToken", parameters: ["domain": "up.example"], more: false)
        var failures: [String] = []
        let roundTrip = { (message: String) in
            { (_: Int) in
                try? app.send(message)
                let reply = (try? app.receive()) ?? ""
                if !reply.contains("\"accessToken\"") { failures.append(String(reply.prefix(200))) }
            }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        roundTrip(downCall)(0)
        measured.firstMicroseconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        let (down, up) = StorageKVBenchmark.interleaved(iterations, roundTrip(downCall), roundTrip(upCall))
        guard failures.isEmpty else {
            throw BenchError.daemon("\(failures.count) GetToken calls got no token, e.g. \(failures[0])")
        }
        measured.down.append(down)
        measured.up.append(up)
    }

    func report(_ measured: Measured) throws {
        let logout = Self.median(measured.logoutMilliseconds)
        let added = zip(measured.down, measured.up).map { $0.medianMicroseconds - $1.medianMicroseconds }
        let down = measured.down.map(\.medianMicroseconds)
        let up = measured.up.map(\.medianMicroseconds)
        print("GetToken, \(runs) runs of \(iterations) per side (median µs per run):")
        print("  provider down, token valid, refresh due: " + Self.list(down))
        print("  provider up, token not due:              " + Self.list(up))
        print("  added by the dead provider:              " + Self.list(added))
        print(
            "  first call after the stop (starts the refresh beside its answer): "
                + Self.list(measured.firstMicroseconds))
        print(
            "  p99 down / up: " + Self.list(measured.down.map(\.p99Microseconds)) + " / "
                + Self.list(measured.up.map(\.p99Microseconds)))
        print(
            "cordon login to the stopped provider (ms, process start to exit): " + Self.list(measured.loginMilliseconds)
        )
        print("SignIn over the socket alone (ms): " + Self.list(measured.signInMilliseconds))
        print(
            "cordon login --provider nope, refused by the agent without a provider (ms): "
                + Self.list(measured.unknownMilliseconds))
        print("cordon logout --identity, the revocation refused (ms): " + Self.list(measured.logoutMilliseconds))
        try summary.append([
            SummaryRecord(
                benchmark: "identity-down", subject: "GetToken, valid token, refresh due, provider down: added",
                comparison: .atMost, targetValue: Self.addedTargetMicroseconds, unit: "µs",
                baseline: "GetToken, provider up, token not due (interleaved)", values: added,
                note: String(
                    format: "medians %.1f µs down, %.1f µs up; the first call after the stop %.1f µs",
                    Self.median(down), Self.median(up), Self.median(measured.firstMicroseconds))),
            SummaryRecord(
                benchmark: "identity-down", subject: "cordon login to a refused port, process start to exit",
                comparison: .atMost, targetValue: Self.loginTargetMilliseconds, unit: "ms", baseline: nil,
                values: measured.loginRuns,
                note: String(
                    format:
                        "the SignIn call alone %.2f ms; login to an unknown provider (no provider contact) %.1f ms; "
                        + "logout --identity %.1f ms", Self.median(measured.signInMilliseconds),
                    Self.median(measured.unknownMilliseconds), logout)),
        ])
    }

    /// `cordon login --provider down`, timed from start to exit; it must fail naming the refusal.
    static func login(_ cordon: String, socket: String) throws -> Double {
        let (status, _, errors, milliseconds) = try timed(cordon, ["login", "--socket", socket, "--provider", "down"])
        guard status != 0, errors.contains("was refused") else {
            throw BenchError.daemon("cordon login to the stopped provider: status \(status), \(errors.prefix(300))")
        }
        return milliseconds
    }

    /// `cordon login --provider nope`, which the agent refuses without contacting a provider: the
    /// command's own cost, timed as `login`.
    static func unknownLogin(_ cordon: String, socket: String) throws -> Double {
        let (status, _, errors, milliseconds) = try timed(cordon, ["login", "--socket", socket, "--provider", "nope"])
        guard status != 0, errors.contains("no identity provider nope") else {
            throw BenchError.daemon("cordon login --provider nope: status \(status), \(errors.prefix(300))")
        }
        return milliseconds
    }

    /// `cordon logout --identity --provider down` with a session, timed; the revocation must be
    /// reported refused.
    static func logout(_ cordon: String, socket: String, port: Int) throws -> Double {
        let (status, output, errors, milliseconds) = try timed(
            cordon, ["logout", "--socket", socket, "--identity", "--provider", "down"])
        guard status == 0, output.contains("not revoked: the connection to 127.0.0.1:\(port) was refused") else {
            throw BenchError.daemon("cordon logout --identity: status \(status), \(output) \(errors.prefix(300))")
        }
        return milliseconds
    }

    /// Runs `path` with `arguments`: its exit status, output, errors and milliseconds from start
    /// to exit.
    static func timed(_ path: String, _ arguments: [String]) throws -> (Int32, String, String, Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        process.waitUntilExit()
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        let read = { (pipe: Pipe) in
            String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        return (process.terminationStatus, read(output), read(errors), milliseconds)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func list(_ values: [Double]) -> String {
        values.map { String(format: $0 < 10 ? "%.2f" : "%.1f", $0) }.joined(separator: " ")
    }
}

extension IdentityDownBenchmark {
    /// The domain `down.example`: its provider started on the same port for each run, signed in
    /// to, then stopped.
    final class Session {
        let app: VarlinkConnection
        let peers: String
        let port: Int
        let agent: BenchAgent

        init(app: VarlinkConnection, peers: String, port: Int, agent: BenchAgent) {
            self.app = app
            self.peers = peers
            self.port = port
            self.agent = agent
        }

        /// A new provider on the port (30-second tokens, always due for a refresh), a sign-in to
        /// it through the agent, then the provider stopped: its port refuses.
        func signInThenStop() throws {
            let provider = try LocalIdentityProvider(peers: peers, port: port)
            defer { provider.stop() }
            _ = try LoopbackHTTP.object(port: port, path: "/admin/config", form: "short_lived=1")
            try IdentityBenchmark.signIn(agent, "down", provider)
        }

        /// `SignIn` to the stopped provider over the socket alone, in milliseconds; it must fail.
        func signInCall() throws -> Double {
            let message = try VarlinkConnection.encode(
                method: "io.cordon.Identity.SignIn", parameters: ["provider": "down"], more: false)
            let start = DispatchTime.now().uptimeNanoseconds
            try app.send(message)
            let reply = try app.receive()
            let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            guard reply.contains("io.cordon.Identity.SignInFailed") else {
                throw BenchError.daemon("SignIn to the stopped provider answered \(reply.prefix(200))")
            }
            return milliseconds
        }
    }
}
