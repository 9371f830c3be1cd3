import ArgumentParser
import Foundation

/// `cordon-bench anchor`: what the TPM state anchor costs an event that must never go back
/// (docs/PERFORMANCE.md, "The state anchor").
///
/// Two agents in one run, both on the fast test KDF: one whose key and state a TPM simulator
/// (swtpm) anchors, one with no TPM (its state unanchored). An HOTP code — an event that raises
/// the anchor's counter before the code leaves — is timed on each, alternately (A B A B …), and a
/// TOTP code (no anchored write) on each as the control. Reported as the median of
/// the runs' medians with their spread, and p99.
struct AnchorBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anchor",
        abstract: "An HOTP code with the state anchored to a TPM (swtpm) against one without a TPM.")

    @Option(help: "Codes measured per side and run.")
    var iterations = 500
    @Option(help: "Runs of each comparison (the spread is across runs).")
    var runs = 3
    @Option(help: "The swtpm binary.")
    var swtpm = "/usr/bin/swtpm"

    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-anchor-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The simulator `cordon-bench unlock` starts, its state under this run's directory.
        let tpm = try BenchSimulator(binary: swtpm, directory: directory + "/swtpm")
        defer { tpm.stop() }
        let readers = directory + "/10-bench-code-readers.json"
        try TokensBenchmark.codeReadersPolicy([TokensBenchmark.appId]).write(
            toFile: readers, atomically: true, encoding: .utf8)
        let anchored = try BenchAgent(
            directory: directory + "/anchored", adminPolicies: [readers], arguments: ["--tpm-tcti", tpm.tcti])
        defer { anchored.stop() }
        // Nothing listens on port 1: no TPM, so the key is software-only and the state unanchored.
        let plain = try BenchAgent(
            directory: directory + "/plain", adminPolicies: [readers],
            arguments: ["--tpm-tcti", "swtpm:host=127.0.0.1,port=1"])
        defer { plain.stop() }
        let status = try anchored.control.call("io.cordon.Agent.GetStatus")["status"] as? [String: Any]
        let protection = status?["keyProtection"] as? [String: Any]
        guard let anchor = protection?["stateAnchor"] as? String else {
            throw BenchError.daemon("the agent on swtpm has no state anchor: \(protection ?? [:])")
        }
        let anchoredReader = try reader(anchored)
        let hotp = try code(anchored, anchoredReader, "otpauth://hotp/bench?secret=\(Self.secret)&counter=0")
        let totp = try code(anchored, anchoredReader, "otpauth://totp/bench?secret=\(Self.secret)")
        let plainReader = try reader(plain)
        let unanchored = try code(plain, plainReader, "otpauth://hotp/bench?secret=\(Self.secret)&counter=0")
        let plainTOTP = try code(plain, plainReader, "otpauth://totp/bench?secret=\(Self.secret)")
        print("state anchor: \(anchor) (swtpm); the other agent has no TPM")
        let (withAnchor, without) = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, hotp, unanchored)
        }
        let (control, plainControl) = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, totp, plainTOTP)
        }
        print("Tokens.Code (median µs of \(runs) runs [min–max of the runs' medians], p99 µs);")
        print("HOTP anchored raises the TPM's counter before the code leaves, TOTP anchored writes nothing:")
        Comparison.row("HOTP anchored", withAnchor, against: without, named: "unanchored")
        Comparison.row("HOTP no TPM", without)
        Comparison.row("TOTP anchored", control, against: plainControl, named: "no TPM")
        Comparison.row("TOTP no TPM", plainControl)
    }

    /// A connection of `agent` registered as the code reader.
    func reader(_ agent: BenchAgent) throws -> VarlinkConnection {
        let reader = try VarlinkConnection(path: agent.socket)
        try reader.call("io.cordon.App.Register", ["appId": TokensBenchmark.appId])
        return reader
    }

    /// A round trip of `Tokens.Code` by `reader` for a token imported from `uri` into `agent`.
    func code(_ agent: BenchAgent, _ reader: VarlinkConnection, _ uri: String) throws -> (Int) -> Void {
        let serial = try TokensBenchmark.importToken(agent, ["data": uri])
        let message = try VarlinkConnection.encode(
            method: "io.cordon.Tokens.Code", parameters: ["serial": serial], more: false)
        try reader.send(message)
        let reply = try reader.receive()
        guard reply.contains("\"code\"") else { throw BenchError.daemon("Tokens.Code answered \(reply)") }
        return { _ in
            try? reader.send(message)
            _ = try? reader.receive()
        }
    }
}
