import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation
import NIOCore

/// `cordon-bench channel`: the pinned channel against its baselines, in one run
/// (docs/PERFORMANCE.md, "Pinned channel").
///
/// handshake: `ChannelConnector.connect` (TCP, TLS 1.3, swift-certificates' verification) with a
/// CA and a pin against the CA alone, alternately, to a local Python HTTPS server. tunnel: the
/// same Python client fetching from that server directly over TLS (verifying with the CA file)
/// and through `cordon run --tunnel`'s TCP port (plain HTTP, the tunnel verifying), a new
/// connection per request and on one kept-alive connection; requests per second and latency.
struct ChannelBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel",
        abstract:
            "Pinned TLS: handshake with and without pins; requests through cordon run --tunnel against direct TLS.")

    @Option(help: "Handshakes (per side and run) and requests (per mode).")
    var iterations = 200
    @Option(help: "Runs of the handshake comparison (the spread is across runs).")
    var runs = 3

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-bench-channel-\(getpid())"
        )
        .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pki = try Self.makePKI(in: directory)
        let server = try ChannelBenchServer(directory: directory, certificate: pki.leaf, key: pki.key)
        defer { server.stop() }
        try handshakes(pki: pki, port: server.port)
        try tunnel(pki: pki, port: server.port, directory: directory)
    }

    /// The handshake with pin checking against the CA alone.
    func handshakes(pki: PKI, port: Int) throws {
        let caOnly = NetworkPolicy(
            pins: [NetworkPolicy.Pin(hosts: ["127.0.0.1"], caCertificates: [pki.caPEM], source: "bench#/0")],
            unpinnedHosts: "deny", unpinnedHostsSource: "bench")
        var pinned = caOnly
        pinned.pins.append(NetworkPolicy.Pin(hosts: ["127.0.0.1"], pinSha256: [pki.pin], source: "bench#/1"))
        let withPin = try ChannelConnector(verifier: ChannelVerifier(policy: pinned), alpn: [])
        let without = try ChannelConnector(verifier: ChannelVerifier(policy: caOnly), alpn: [])
        let iterations = self.iterations
        let (pinSide, caSide) = Comparison.runs(runs) {
            let samples =
                (try? BlockingAsync.run { () async throws -> ([UInt64], [UInt64]) in
                    var first: [UInt64] = []
                    var second: [UInt64] = []
                    for _ in 0..<iterations {
                        first.append(try await Self.time { try await withPin.connect(host: "127.0.0.1", port: port) })
                        second.append(try await Self.time { try await without.connect(host: "127.0.0.1", port: port) })
                    }
                    return (first, second)
                }) ?? ([], [])
            return (LatencyStats(samples: samples.0), LatencyStats(samples: samples.1))
        }
        print("handshake, connect + TLS + verification (median µs of \(runs) runs [min–max], p99 µs):")
        Comparison.row("CA + pin", pinSide, against: caSide, named: "CA only")
        Comparison.row("CA only", caSide)
    }

    /// Connects, completes the verified handshake and closes; the nanoseconds it took.
    static func time(_ connect: () async throws -> (channel: any Channel, negotiatedProtocol: String?)) async throws
        -> UInt64
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let (channel, _) = try await connect()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        try? await channel.close()
        return elapsed
    }

    /// The Python client directly and through `cordon run --tunnel`.
    func tunnel(pki: PKI, port: Int, directory: String) throws {
        // The pins as an admin would push them: the agent answers them to the tunnel.
        let policyFile = directory + "/50-bench-network.json"
        try Self.networkPolicy(pin: pki.pin, caPEM: pki.caPEM).write(
            toFile: policyFile, atomically: true, encoding: .utf8)
        let client = directory + "/client.py"
        try ChannelBenchServer.client.write(toFile: client, atomically: true, encoding: .utf8)
        let agent = try BenchAgent(directory: directory + "/agent", adminPolicies: [policyFile])
        defer { agent.stop() }
        let cordon = URL(fileURLWithPath: DaemonLauncher.cordondPath).deletingLastPathComponent()
            .appendingPathComponent("cordon").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cordon)
        process.arguments = [
            "--socket", agent.socket, "run", "--app", "com.example.bench", "--cgroup-parent", "none",
            "--tunnel", "api=https://127.0.0.1:\(port)", "--",
            "python3", client, "\(port)", pki.caFile, "\(iterations)",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["CORDON_RUNTIME_DIR"] = directory + "/rt"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError.daemon("cordon run --tunnel exited \(process.terminationStatus)")
        }
        print("requests, Python http.client, \(iterations) per mode (median µs, p99 µs, requests/s):")
        print(String(decoding: data, as: UTF8.self), terminator: "")
    }

    /// An admin policy pinning 127.0.0.1 to the leaf's key and the test CA; every other host denied.
    static func networkPolicy(pin: String, caPEM: String) throws -> String {
        let document: [String: Any] = [
            "schema": "cordon.policy.v1",
            "network": [
                "pins": [["hosts": ["127.0.0.1"], "pinSha256": [pin], "caCertificates": [caPEM]]],
                "unpinnedHosts": "deny",
            ],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    struct PKI {
        let caFile: String
        let caPEM: String
        let leaf: String
        let key: String
        let pin: String
    }

    static func makePKI(in directory: String) throws -> PKI {
        let ca = directory + "/ca.pem"
        let caKey = directory + "/ca.key"
        let leaf = directory + "/leaf.pem"
        let key = directory + "/leaf.key"
        let script = """
            set -e
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '\(caKey)' -out '\(ca)' \
              -subj /CN=bench-ca -days 2 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '\(key)' -out '\(directory)/leaf.csr' \
              -subj /CN=127.0.0.1 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > '\(directory)/leaf.ext'
            openssl x509 -req -in '\(directory)/leaf.csr' -CA '\(ca)' -CAkey '\(caKey)' -CAcreateserial -out '\(leaf)' \
              -days 2 -extfile '\(directory)/leaf.ext' 2>/dev/null
            openssl x509 -in '\(leaf)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let pin = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        guard process.terminationStatus == 0, !pin.isEmpty else { throw BenchError.daemon("openssl failed") }
        return PKI(
            caFile: ca, caPEM: try String(contentsOfFile: ca, encoding: .utf8), leaf: leaf, key: key, pin: pin)
    }
}
