import Foundation

/// A TPM 2.0 simulator (Debian `swtpm`) on free local ports in its own temporary state directory,
/// for benchmarks that need a TPM (`cordon-bench anchor`); the agent reaches it with ``tcti``.
final class BenchTPM {
    let process: Process
    let stateDirectory: String
    let port: Int

    /// The TCTI configuration cordond takes with `--tpm-tcti` (test mode).
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// Starts a fresh simulator; throws when `swtpm` is not installed or does not come up.
    init() throws {
        guard let swtpm = Peer.which("swtpm") else {
            throw BenchError.daemon("swtpm is not installed (scripts/install-deps.sh installs it)")
        }
        stateDirectory =
            FileManager.default.temporaryDirectory.appendingPathComponent("cordon-bench-swtpm-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        for _ in 0..<20 {
            let candidate = Int.random(in: 20_000...60_000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: swtpm)
            process.arguments = [
                "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)", "--server",
                "type=tcp,port=\(candidate),bindaddr=127.0.0.1", "--ctrl",
                "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<300 where process.isRunning {
                if Self.accepts(candidate) {
                    self.process = process
                    self.port = candidate
                    return
                }
                usleep(10_000)
            }
            // Lost the port to another program: try another.
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        throw BenchError.daemon("swtpm did not start on a free port")
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    private static func accepts(_ port: Int) -> Bool {
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
