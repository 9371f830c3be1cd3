import Foundation

/// A dbus-daemon session bus of the benchmark's own in a temporary directory (never the user's),
/// started with `SpawnedProcess` so that stopping it cannot hang, and the environment a daemon
/// on it gets: HOME, XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and XDG_RUNTIME_DIR in that
/// directory too.
final class PrivateSessionBus {
    let process: SpawnedProcess
    let address: String
    let home: String
    let runtime: String

    init(directory: String, executable: String) throws {
        home = directory + "/home"
        runtime = directory + "/run"
        for path in [home, home + "/data", home + "/config", home + "/cache", runtime] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        chmod(runtime, 0o700)
        let socket = directory + "/bus.sock"
        let configuration = directory + "/bus.conf"
        try DBusDaemon.configuration(socket: socket).write(toFile: configuration, atomically: true, encoding: .utf8)
        address = "unix:path=" + socket
        process = try SpawnedProcess(
            executable: executable, arguments: ["--config-file=" + configuration, "--nofork"],
            environment: ["PATH": "/usr/bin:/bin"], output: directory + "/bus.log")
        do {
            try process.wait(upTo: 10, what: "listening on \(socket)") {
                FileManager.default.fileExists(atPath: socket)
            }
        } catch {
            process.stop()
            throw error
        }
    }

    /// The environment of a daemon on this bus, with `extra`.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "XDG_CACHE_HOME": home + "/cache", "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": address,
        ].merging(extra) { $1 }
    }

    func stop() { process.stop() }
}
