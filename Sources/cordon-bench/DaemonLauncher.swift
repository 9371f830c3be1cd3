import Foundation

/// Starts the `cordond` next to this executable on a temporary directory.
enum DaemonLauncher {
    /// The `cordond` next to this executable.
    static var cordondPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("cordond").path
    }

    static func start(in directory: String, adminPolicies: [String] = [], arguments extra: [String] = []) throws -> (
        process: Process, socket: String
    ) {
        try FileManager.default.createDirectory(atPath: directory + "/admin", withIntermediateDirectories: true)
        // The benchmark's apps are unbound: trust them, as a policy must say plainly (docs/THREAT-MODEL.md).
        try #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#
            .write(toFile: directory + "/admin/00-bench-trust-unbound.json", atomically: true, encoding: .utf8)
        for file in adminPolicies {
            try FileManager.default.copyItem(
                atPath: file, toPath: directory + "/admin/" + (file as NSString).lastPathComponent)
        }
        let executable = URL(fileURLWithPath: cordondPath)
        let process = Process()
        process.executableURL = executable
        process.arguments =
            [
                "--runtime-dir", directory + "/run", "--data-dir", directory + "/data", "--config-dir",
                directory + "/config", "--admin-policy-dir", directory + "/admin", "--trust-dir", directory + "/trust",
                "--log-level", "warning", "--idle-timeout", "0",
                // Admin inputs from flags and temporary directories: test mode, which status shows.
                "--test-mode",
                // The benchmark's one process plays every client (up to 2,000 apps, two connections each).
                "--max-connections-per-process", "4096",
            ] + extra
        process.standardError = FileHandle.nullDevice
        try process.run()
        let socket = directory + "/run/agent.sock"
        for _ in 0..<500 {
            if (try? RawUnixSocket.connect(to: socket)) != nil { return (process, socket) }
            guard process.isRunning else { throw BenchError.daemon("exited at startup") }
            usleep(10_000)
        }
        process.terminate()
        throw BenchError.daemon("did not answer at \(socket)")
    }
}
