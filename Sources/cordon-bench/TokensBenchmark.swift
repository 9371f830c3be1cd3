import ArgumentParser
import CCordonBench
import CordonTokens
import Foundation

/// `cordon-bench tokens`: a code through `io.cordon.Tokens.Code` against what a user would run
/// otherwise and against the computation itself, in one run.
///
/// in-process: `OATHCode` (TOTP) and `SecurIDCode` (SecurID v2, PINPad), what the agent computes
/// once it holds the seed. socket: `Tokens.Code` by a registered code reader against `GetStatus`
/// on the same connection and against the separate-process C echo of `cordon-bench rtt` (replies of
/// Code's size). processes: `oathtool --totp` and `stoken tokencode` started for each code (a
/// user's alternative), each paired with a `Tokens.Code` of the same kind of token. Every pair is
/// timed alternately (A B A B …), in `runs` runs, and reported as the median of medians with the
/// spread across runs.
struct TokensBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Token codes through the agent against oathtool and stoken as processes and in-process.")

    @Option(help: "Calls measured per side and run (socket and in-process).")
    var iterations = 5000
    @Option(help: "Processes started per side and run (oathtool, stoken).")
    var processes = 100
    @Option(help: "Runs of each comparison (the spread is across runs).")
    var runs = 5

    /// A 20-byte TOTP secret (RFC 6238's) and stoken's own v2 test token (PINPad, 8 digits, 60 s).
    static let totpSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let securIDToken = "236009685137855171517771531223420714422455605315047123724173150104505732716712602"
    static let pin = "123451"
    static let appId = "com.example.bench"

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-tokens-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try inProcess()
        try throughAgent(directory: directory)
    }

    /// The computation alone: what a `Tokens.Code` costs the agent beyond the socket.
    func inProcess() throws {
        let totp = try OTPAuthURI.parse("otpauth://totp/bench?secret=\(Self.totpSecret)")
        let securID = try TokenImporter.read(
            TokenImportRequest(data: Self.securIDToken, pin: Self.pin), now: Int64(Date().timeIntervalSince1970),
            oathIDKey: [])
        guard case .securID(let token) = securID.tokens.first?.secret else {
            throw BenchError.daemon("stoken's v2 test token did not read as SecurID")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let (oath, secur) = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(
                iterations, { index in _ = OATHCode.code(for: totp, at: now + Int64(index)) },
                { index in _ = try? SecurIDCode.code(for: token, at: now + Int64(index), pin: Self.pin) })
        }
        print("in-process (median µs of \(runs) runs [min–max of the runs' medians], p99 µs):")
        Comparison.row("TOTP (OATHCode)", oath)
        Comparison.row("SecurID (SecurIDCode)", secur)
    }

    /// `Tokens.Code` over the socket against its baselines.
    func throughAgent(directory: String) throws {
        let readers = directory + "/10-bench-code-readers.json"
        try Self.codeReadersPolicy([Self.appId]).write(toFile: readers, atomically: true, encoding: .utf8)
        setenv("CORDON_INSECURE_FAST_KDF", "1", 1)
        setenv("CORDON_TEST_MODE", "1", 1)
        let agent = try BenchAgent(directory: directory + "/agent", adminPolicies: [readers])
        defer { agent.stop() }
        let totpSerial = try Self.importToken(agent, ["data": "otpauth://totp/bench?secret=\(Self.totpSecret)"])
        let securIDSerial = try Self.importToken(agent, ["data": Self.securIDToken, "pin": Self.pin])
        let app = try VarlinkConnection(path: agent.socket)
        try app.call("io.cordon.App.Register", ["appId": Self.appId])
        let totpCode = try VarlinkConnection.encode(
            method: "io.cordon.Tokens.Code", parameters: ["serial": totpSerial], more: false)
        let securIDCode = try VarlinkConnection.encode(
            method: "io.cordon.Tokens.Code", parameters: ["serial": securIDSerial], more: false)
        let status = try VarlinkConnection.encode(method: "io.cordon.Agent.GetStatus", parameters: [:], more: false)
        let roundTrip = { (message: String) in
            { (_: Int) in
                try? app.send(message)
                _ = try? app.receive()
            }
        }
        try app.send(totpCode)
        let reply = try app.receive()
        guard reply.contains("\"code\"") else { throw BenchError.daemon("Tokens.Code answered \(reply)") }
        let echoPath = directory + "/echo.sock"
        let echoPid = ccb_echo_spawn(echoPath, reply.utf8.count, -1)
        guard echoPid > 0 else { throw BenchError.system("starting the echo process", -echoPid) }
        defer { ccb_echo_stop(echoPid) }
        let echo = try RawUnixSocket.connect(to: echoPath)
        let request = Array(totpCode.utf8) + [0]
        let echoRoundTrip = { (_: Int) in
            try? echo.send(request)
            _ = try? echo.receiveMessage()
        }
        let againstStatus = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, roundTrip(totpCode), roundTrip(status))
        }
        let againstEcho = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, roundTrip(totpCode), echoRoundTrip)
        }
        let securIDAgainstEcho = Comparison.runs(runs) {
            StorageKVBenchmark.interleaved(iterations, roundTrip(securIDCode), echoRoundTrip)
        }
        print("socket (median µs of \(runs) runs [min–max of the runs' medians], p99 µs):")
        Comparison.row("Tokens.Code TOTP", againstStatus.0, against: againstStatus.1, named: "GetStatus")
        Comparison.row("GetStatus", againstStatus.1)
        Comparison.row("Tokens.Code TOTP", againstEcho.0, against: againstEcho.1, named: "C echo")
        Comparison.row("Tokens.Code SecurID", securIDAgainstEcho.0, against: securIDAgainstEcho.1, named: "C echo")
        Comparison.row("C echo", againstEcho.1)
        try againstProcesses(roundTrip(totpCode), roundTrip(securIDCode))
    }

    /// A code from a process a user would start, paired with `Tokens.Code` of the same kind.
    func againstProcesses(_ totpCode: @escaping (Int) -> Void, _ securIDCode: @escaping (Int) -> Void) throws {
        print("processes (median µs of \(runs) runs [min–max of the runs' medians], p99 µs):")
        let peers: [(name: String, path: String?, arguments: [String], agent: (Int) -> Void)] = [
            ("oathtool --totp", Peer.which("oathtool"), ["--totp", "-b", Self.totpSecret], totpCode),
            (
                "stoken tokencode", Peer.which("stoken"),
                ["tokencode", "--token=\(Self.securIDToken)", "--pin=\(Self.pin)"], securIDCode
            ),
        ]
        for peer in peers {
            guard let path = peer.path else {
                print("\(peer.name): not installed (scripts/install-deps.sh installs it)")
                continue
            }
            let (process, agent) = Comparison.runs(runs) {
                StorageKVBenchmark.interleaved(
                    processes, { _ in Peer.run(path, peer.arguments) }, peer.agent)
            }
            Comparison.row(peer.name, process, against: agent, named: "Tokens.Code")
            Comparison.row("Tokens.Code", agent)
        }
    }

    /// An admin policy that lets `apps` read token codes (`tokens.codeReaders`).
    static func codeReadersPolicy(_ apps: [String]) -> String {
        let list = apps.map { "\"\($0)\"" }.joined(separator: ", ")
        return #"{"schema": "cordon.policy.v1", "tokens": {"codeReaders": [\#(list)]}}"#
    }

    /// Imports `parameters` with the passcode on the control connection; the first token's serial.
    static func importToken(_ agent: BenchAgent, _ parameters: [String: Any]) throws -> String {
        var parameters = parameters
        parameters["passcode"] = BenchAgent.passcode
        let reply = try agent.control.call("io.cordon.Tokens.Import", parameters)
        guard let tokens = reply["tokens"] as? [[String: Any]], let serial = tokens.first?["serial"] as? String else {
            throw BenchError.daemon("Tokens.Import answered \(reply)")
        }
        return serial
    }
}
