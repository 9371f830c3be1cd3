import ChannelTestPeers
import Foundation

/// A real node_exporter (Debian's `prometheus-node-exporter`) with only its textfile collector,
/// reading every directory the glob `textfiles` matches, as an admin points it at the agents'
/// metrics files.
final class NodeExporter: @unchecked Sendable {
    let port: Int
    private let process = Process()
    private let logPath: String

    init(textfiles: String, log: String) throws {
        port = try TestPorts.free()
        logPath = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus-node-exporter")
        process.arguments = [
            "--web.listen-address=127.0.0.1:\(port)", "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(textfiles)",
        ]
        let output = FileHandle(forWritingAtPath: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    var target: String { "127.0.0.1:\(port)" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
