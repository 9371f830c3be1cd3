import CordonLocking
import Logging

/// What the swarm's machines warn about (a catch-up read that failed, a report not published), kept
/// per machine (the first few of each): a machine that missed a command says why.
final class SwarmLog: Sendable {
    private let warnings = Locked<[String: [String]]>([:])

    /// The logger of machine `index`: warnings and worse are kept, the rest dropped.
    func logger(for index: Int) -> Logger {
        var logger = Logger(label: "m\(index)") { [self] label in Handler(label: label, log: self) }
        logger.logLevel = .warning
        return logger
    }

    /// Machine `index`'s warnings.
    func warnings(of index: Int) -> [String] { warnings.withLock { $0["m\(index)"] ?? [] } }

    fileprivate func keep(_ label: String, _ message: String) {
        warnings.withLock { all in
            if all[label, default: []].count < 8 { all[label, default: []].append(message) }
        }
    }

    private struct Handler: LogHandler {
        let label: String
        let log: SwarmLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { log.keep(label, "\(event.message)") }
    }
}
