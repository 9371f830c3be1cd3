import ChannelTestPeers
import Foundation

/// A real Prometheus (Debian's `prometheus`) scraping one target every second into a temporary
/// directory, queried through its HTTP API; and `promtool`, its checker of the text format.
final class PrometheusServer: @unchecked Sendable {
    let directory: TemporaryDirectory
    let port: Int
    private let process = Process()

    static let promtool = URL(fileURLWithPath: "/usr/bin/promtool")

    /// Starts Prometheus scraping `target` (`host:port`, path `/metrics`) every second.
    init(scraping target: String) throws {
        directory = try TemporaryDirectory()
        port = try TestPorts.free()
        let configuration = """
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
            scrape_configs:
              - job_name: cordon
                static_configs:
                  - targets: ["\(target)"]
            """
        try configuration.write(toFile: directory.appending("prometheus.yml"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus")
        process.arguments = [
            "--config.file=\(directory.appending("prometheus.yml"))",
            "--storage.tsdb.path=\(directory.appending("data"))", "--web.listen-address=127.0.0.1:\(port)",
        ]
        _ = FileManager.default.createFile(atPath: directory.appending("prometheus.log"), contents: nil)
        let log = FileHandle(forWritingAtPath: directory.appending("prometheus.log"))
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var log: String { (try? String(contentsOfFile: directory.appending("prometheus.log"), encoding: .utf8)) ?? "" }

    /// The instant query's series: each one's labels (without `__name__`, `job`, `instance`) and value.
    func query(_ expression: String) async throws -> [[String: String]: Double] {
        guard process.isRunning else { throw EventuallyError(what: "prometheus exited: \(log)") }
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-sf", "--get", "--data-urlencode", "query=\(expression)", "http://127.0.0.1:\(port)/api/v1/query"])
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let data = object["data"] as? [String: Any], let series = data["result"] as? [[String: Any]]
        else { throw EventuallyError(what: "query \(expression): \(result.stdout)\(result.stderr)") }
        var out: [[String: String]: Double] = [:]
        for one in series {
            var labels = one["metric"] as? [String: String] ?? [:]
            for name in ["__name__", "job", "instance"] { labels[name] = nil }
            if let value = one["value"] as? [Any], let text = value.last as? String, let number = Double(text) {
                out[labels] = number
            }
        }
        return out
    }

    /// `promtool check metrics` on `text`, as it ran.
    static func check(_ text: String) async throws -> CommandResult {
        try await runCommand(promtool, ["check", "metrics"], input: text)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        directory.remove()
    }
}
