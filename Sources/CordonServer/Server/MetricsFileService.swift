import Logging
import NIOCore
import ServiceLifecycle

/// Writes the agent's metrics to its file (`--metrics-file`) every `interval` and once more at
/// shutdown; the apps' compliance is counted on the agent's loop first. A write that fails is
/// logged and tried again at the next interval: metrics never stop the agent.
public struct MetricsFileService: Service {
    private let server: AgentServer
    private let file: MetricsFile
    private let interval: Duration

    public init(server: AgentServer, file: MetricsFile, interval: Duration = .seconds(15)) {
        self.server = server
        self.file = file
        self.interval = interval
    }

    public func run() async throws {
        server.logger.info("writing metrics", metadata: ["file": "\(file.path)"])
        while true {
            await write()
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                break
            }
        }
        await write()
    }

    private func write() async {
        let agent = server.agent
        try? await server.loop.submit { agent.value.recordAppMetrics() }.get()
        do {
            try file.write(server.configuration.metrics.emit())
        } catch {
            server.logger.warning("metrics not written", metadata: ["error": "\(error)"])
        }
    }
}
