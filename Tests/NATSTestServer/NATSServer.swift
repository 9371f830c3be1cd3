import Foundation

/// A real `nats-server` (Debian's) with JetStream, in a temporary directory, its users named by NKey
/// with their permissions; stopped by `stop()`. The port is the server's choice at first start and
/// kept across `restart()`.
public final class NATSServer: @unchecked Sendable {
    /// One user: its NKey and the subjects it may publish and subscribe to.
    public struct User {
        public var nkey: String
        public var publish: [String]
        public var subscribe: [String]

        public init(nkey: String, publish: [String], subscribe: [String]) {
            self.nkey = nkey
            self.publish = publish
            self.subscribe = subscribe
        }
    }

    public let directory: URL
    public private(set) var port = 0
    private var process: Process?
    private var log: URL { directory.appendingPathComponent("nats.log") }

    /// `tls://` when the server requires TLS.
    public var url: String { "\(tls == nil ? "nats" : "tls")://127.0.0.1:\(port)" }

    /// The server's certificate and key (PEM paths): set, it requires TLS of every client.
    public struct TLS {
        public var certificate: String
        public var key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    private var tls: TLS?

    public init(users: [User], tls: TLS? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.users = users
        self.tls = tls
        try start()
    }

    private let users: [User]

    private func configuration() -> String {
        func list(_ subjects: [String]) -> String { "[" + subjects.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        let entries = users.map {
            "    { nkey: \"\($0.nkey)\", permissions: { publish: { allow: \(list($0.publish)) }, subscribe: { allow: \(list($0.subscribe)) } } }"
        }
        return """
            listen: "127.0.0.1:\(port == 0 ? -1 : port)"
            debug: true
            jetstream { store_dir: "\(directory.path)/jetstream" }
            \(tls.map { "tls { cert_file: \"\($0.certificate)\", key_file: \"\($0.key)\", timeout: 10 }" } ?? "")
            authorization {
              # A loaded CI machine may take a while to answer the nonce.
              timeout: 10
              users = [
            \(entries.joined(separator: "\n"))
              ]
            }

            """
    }

    private func start() throws {
        let config = directory.appendingPathComponent("nats.conf")
        try configuration().write(to: config, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(at: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nats-server")
        process.arguments = ["-c", config.path, "-l", log.path]
        try process.run()
        self.process = process
        // Ready when it logs the port it listens on.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOf: log, encoding: .utf8),
                let range = text.range(of: "Listening for client connections on 127.0.0.1:")
            {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                port = Int(digits) ?? 0
                if text.contains("Server is ready") { return }
            }
            guard process.isRunning else { throw Failure(message: "nats-server exited: \(logText)") }
            usleep(20_000)
        }
        throw Failure(message: "nats-server did not start: \(logText)")
    }

    public var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Stops and starts the server again on the same port with the same stream storage.
    public func restart() throws {
        halt()
        try start()
    }

    /// Stops the server (SIGTERM, then waits).
    public func halt() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    public func stop() {
        halt()
        try? FileManager.default.removeItem(at: directory)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
