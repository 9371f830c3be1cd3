import ArgumentParser
import CordonSecrets
import CordonStore
import Dispatch
import Foundation

/// `cordon-bench unlock`: an `Unlock` with the passcode, software-only vs sealed by a TPM (swtpm),
/// against scrypt alone with the same parameters as the baseline, in the same run.
struct UnlockBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock latency: software-only vs TPM (swtpm) vs the scrypt KDF alone.",
        discussion: """
            Two agents (test mode, the real KDF tuned to --kdf-target-ms): one with passcode.hardware off, \
            one sealing to a fresh swtpm on 127.0.0.1. Each run is Logout (the key is zeroed) then Unlock \
            with the passcode, timed from the call to the reply. The baseline is scrypt of the passcode \
            with the parameters the software agent stored, in this process. A real TPM is slower than swtpm.
            """)

    @Option(help: "Unlocks measured per agent.")
    var runs = 20
    @Option(help: "The agent's scrypt target in milliseconds (--kdf-target-ms).")
    var kdfTargetMs = 250
    @Option(help: "The swtpm binary.")
    var swtpm = "/usr/bin/swtpm"
    @Flag(help: "Print JSON instead of a table.")
    var json = false

    struct Report: Codable {
        let runs: Int
        let kdf: String
        let scryptAlone: LatencyStats
        let softwareUnlock: LatencyStats
        let tpmUnlock: LatencyStats
    }

    static let passcode = "bench-passcode-4711"

    func run() throws {
        unsetenv("CORDON_INSECURE_FAST_KDF")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-unlock-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let off = directory + "/50-hardware-off.json"
        try #"{"schema": "cordon.policy.v1", "passcode": {"hardware": "off"}}"#
            .write(toFile: off, atomically: true, encoding: .utf8)
        let softwareAgent = try UnlockAgent(
            directory: directory + "/software", admin: [off], tcti: nil, kdfTargetMs: kdfTargetMs)
        defer { softwareAgent.stop() }
        let simulator = try BenchSimulator(binary: swtpm, directory: directory + "/swtpm")
        defer { simulator.stop() }
        let tpmAgent = try UnlockAgent(
            directory: directory + "/tpm", admin: [], tcti: simulator.tcti, kdfTargetMs: kdfTargetMs)
        defer { tpmAgent.stop() }
        let kdf = softwareAgent.kdf
        let custody = KeyCustody()
        // The three sides in turn, run by run, so the machine's load falls on all of them alike.
        var (software, tpm, scrypt): ([UInt64], [UInt64], [UInt64]) = ([], [], [])
        for _ in 0..<max(1, runs) {
            software.append(try softwareAgent.timeUnlock())
            tpm.append(try tpmAgent.timeUnlock())
            let start = DispatchTime.now().uptimeNanoseconds
            let stretched = try custody.stretch(passcode: Self.passcode, kdf: kdf)
            scrypt.append(DispatchTime.now().uptimeNanoseconds - start)
            stretched.zero()
        }
        let report = Report(
            runs: software.count,
            kdf: "scrypt N=\(kdf.rounds) r=\(kdf.blockSize) p=\(kdf.parallelism)"
                + (tpmAgent.kdf.rounds == kdf.rounds ? "" : " (the TPM agent tuned N=\(tpmAgent.kdf.rounds))"),
            scryptAlone: LatencyStats(samples: scrypt), softwareUnlock: LatencyStats(samples: software),
            tpmUnlock: LatencyStats(samples: tpm))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("unlock latency, \(report.runs) runs each, \(report.kdf)")
            print("                      median ms    p99 ms   mean ms")
            for (name, stats) in [
                ("scrypt alone", report.scryptAlone), ("Unlock, software", report.softwareUnlock),
                ("Unlock, TPM (swtpm)", report.tpmUnlock),
            ] {
                let cells = [stats.medianMicroseconds, stats.p99Microseconds, stats.meanMicroseconds].map {
                    String(format: "%9.1f", $0 / 1000)
                }
                print(name.padding(toLength: 20, withPad: " ", startingAt: 0) + "  " + cells.joined(separator: " "))
            }
        }
    }
}

/// One agent of the unlock benchmark: started, initialized, its stored protection checked.
struct UnlockAgent {
    let process: Process
    let control: VarlinkConnection
    /// The KDF parameters it stored at `Initialize`.
    let kdf: KDFParameters

    init(directory: String, admin: [String], tcti: String?, kdfTargetMs: Int) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (process, socket) = try DaemonLauncher.start(
            in: directory, adminPolicies: admin,
            arguments: ["--kdf-target-ms", "\(kdfTargetMs)", "--tpm-tcti", tcti ?? "swtpm:host=127.0.0.1,port=1"])
        self.process = process
        control = try VarlinkConnection(path: socket)
        try control.call("io.cordon.Agent.Initialize", ["passcode": UnlockBenchmark.passcode])
        guard let wrapped = try CordonDatabase(path: directory + "/data/cordon.sqlite", readOnly: true).loadWrappedKey()
        else { throw BenchError.daemon("no keystore after Initialize") }
        guard (tcti == nil) == (wrapped.protection == .software) else {
            throw BenchError.daemon("the key is protected by \(wrapped.protection.rawValue), not as asked")
        }
        kdf = wrapped.kdf
    }

    /// Logout (the key is zeroed), then the time of one Unlock with the passcode, in nanoseconds.
    func timeUnlock() throws -> UInt64 {
        try control.call("io.cordon.Agent.Logout")
        let start = DispatchTime.now().uptimeNanoseconds
        try control.call("io.cordon.Agent.Unlock", ["passcode": UnlockBenchmark.passcode])
        return DispatchTime.now().uptimeNanoseconds - start
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// A swtpm TPM 2.0 simulator on 127.0.0.1 for the benchmark's TPM agent. Started with default
/// signal dispositions and an empty mask (`SpawnedProcess`): started through Foundation's
/// `Process` from the benchmark's task, it inherited a mask blocking SIGTERM, and `stop` waited
/// for it forever (`make bench` hung after `cordon-bench anchor`).
struct BenchSimulator {
    let process: SpawnedProcess
    let port: Int
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init(binary: String, directory: String) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError.daemon("\(binary) not found (install swtpm)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = Int.random(in: 20_000...60_000)
        let process = try SpawnedProcess(
            executable: binary,
            arguments: [
                "socket", "--tpm2", "--tpmstate", "dir=\(directory)", "--server",
                "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear",
            ],
            environment: [:])
        do {
            try process.wait(upTo: 5, what: "listening on \(port)") { Self.accepts(port) }
        } catch {
            process.stop()
            throw BenchError.daemon("swtpm: \(error) (port \(port) taken?)")
        }
        self.process = process
        self.port = port
    }

    /// SIGTERM, then SIGKILL after 2 s; reaps it.
    func stop() {
        process.stop()
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
