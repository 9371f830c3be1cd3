import CordonProtocol
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// fleetd's settings, `/etc/cordon/fleet.json` (docs/FLEET.md):
/// ```json
/// { "repository": "https://fleet.example.com/cordon/", "caFile": "/etc/cordon/fleet-ca.pem",
///   "intervalSeconds": 300, "reportURL": "https://fleet.example.com/reports/",
///   "push": { "servers": ["tls://nats.example.com:4222"], "caFile": "/etc/cordon/nats-ca.pem" },
///   "metrics": { "listen": "127.0.0.1:9477" } }
/// ```
/// The trusted root the admins ship is `/etc/cordon/fleet-root.json` (or `trustedRoot`).
public struct FleetdConfiguration: Sendable, Equatable {
    /// The repository's base URL (ending in `/`): metadata at the base, target files under `targets/`.
    public var repository: String
    /// PEM CA certificates to trust for the repository instead of the system's.
    public var caFile: String?
    /// Seconds between polls (jittered ±50%).
    public var intervalSeconds: Double
    /// Where the device's signed reports are PUT (`<reportURL><device id>.json`), if anywhere.
    public var reportURL: String?
    /// The root metadata the admins ship.
    public var trustedRoot: String
    /// The push channel (docs/FLEET.md, "Push"), if any.
    public var push: Push?
    /// Where the Prometheus metrics are served (`metrics.listen`, a loopback address), if anywhere.
    public var metrics: MetricsListen?

    /// A loopback address and port for the metrics endpoint: `127.0.0.1:9477`, `[::1]:9477`.
    public struct MetricsListen: Sendable, Equatable {
        /// The address, without brackets.
        public var host: String
        /// The port (0: the kernel picks one).
        public var port: Int

        /// Parses `host:port` (`[v6]:port` for IPv6); nil unless the address is a loopback one.
        public init?(_ text: String) {
            let host: Substring
            let port: Substring
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                host = text[text.index(after: text.startIndex)..<close]
                guard text[close...].hasPrefix("]:") else { return nil }
                port = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":") else { return nil }
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard let number = Int(port), (0...65_535).contains(number), Self.isLoopback(String(host)) else {
                return nil
            }
            self.host = String(host)
            self.port = number
        }

        /// Whether `host` is an IPv4 address in 127.0.0.0/8 or the IPv6 `::1` (no names: a name
        /// could resolve elsewhere).
        static func isLoopback(_ host: String) -> Bool {
            var v4 = in_addr()
            if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
            return withUnsafeBytes(of: &v6) { Array($0) } == Array(repeating: 0, count: 15) + [1]
        }
    }

    /// Where fleetd listens for the doorbell: NATS servers, and the CA their TLS certificates chain to.
    public struct Push: Sendable, Equatable {
        /// `tls://host:port` (or `nats://` for a server on this machine or a test).
        public var servers: [String]
        public var caFile: String?
        /// A machine that lost its server waits a random time up to this many seconds before trying
        /// again, then up to twice as long after each failure (to at most 60 s, or this when longer):
        /// a fleet whose server restarted comes back spread over the window, not all in the same
        /// second (docs/PERFORMANCE.md, "Fleet push"). 10 s spreads 10,000 machines to about
        /// 1,000 connections a second.
        public var reconnectWindowSeconds: Double

        public init(servers: [String], caFile: String? = nil, reconnectWindowSeconds: Double = 10) {
            self.servers = servers
            self.caFile = caFile
            self.reconnectWindowSeconds = reconnectWindowSeconds
        }
    }

    public init(
        repository: String, caFile: String? = nil, intervalSeconds: Double = 300, reportURL: String? = nil,
        trustedRoot: String = "/etc/cordon/fleet-root.json"
    ) {
        self.repository = repository.hasSuffix("/") ? repository : repository + "/"
        self.caFile = caFile
        self.intervalSeconds = intervalSeconds
        self.reportURL = reportURL
        self.trustedRoot = trustedRoot
    }

    /// Reads and checks the file at `path`; errors name the file and the JSON pointer.
    public static func load(_ path: String) throws(FleetdError) -> FleetdConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FleetdError("cannot read \(path)", hint: "write it as docs/FLEET.md shows, or pass --config FILE")
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data), case .object(let members) = value
        else {
            throw FleetdError("\(path) is not a JSON object", hint: "see docs/FLEET.md for the settings")
        }
        let known: Set = ["repository", "caFile", "intervalSeconds", "reportURL", "trustedRoot", "push", "metrics"]
        if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
            throw FleetdError(
                "\(path): /\(unknown) is not a setting",
                hint: "the settings are \(known.sorted().joined(separator: ", "))")
        }
        guard let repository = members["repository"]?.stringValue, let url = URL(string: repository),
            url.scheme == "https",
            url.host != nil
        else {
            throw FleetdError(
                "\(path): /repository must be an https:// URL", hint: "the transport is untrusted, but it is TLS")
        }
        func string(_ key: String) throws(FleetdError) -> String? {
            guard let member = members[key] else { return nil }
            guard let text = member.stringValue, !text.isEmpty else {
                throw FleetdError("\(path): /\(key) must be a non-empty string", hint: "see docs/FLEET.md")
            }
            return text
        }
        var interval = 300.0
        if let member = members["intervalSeconds"] {
            guard let seconds = member.doubleValue, seconds >= 1, seconds <= 86_400 else {
                throw FleetdError(
                    "\(path): /intervalSeconds must be a number from 1 to 86400", hint: "300 is the default")
            }
            interval = seconds
        }
        let report = try string("reportURL")
        if let report, URL(string: report)?.scheme != "https" {
            throw FleetdError("\(path): /reportURL must be an https:// URL", hint: "reports are PUT over TLS")
        }
        var configuration = FleetdConfiguration(
            repository: repository, caFile: try string("caFile"), intervalSeconds: interval, reportURL: report,
            trustedRoot: try string("trustedRoot") ?? "/etc/cordon/fleet-root.json")
        if let member = members["push"] { configuration.push = try Push.parse(member, in: path) }
        configuration.metrics = try metricsListen(members["metrics"], path: path)
        return configuration
    }

    /// `/metrics`: absent is off; else an object whose one member `listen` is a loopback `host:port`.
    private static func metricsListen(_ value: JSONValue?, path: String) throws(FleetdError) -> MetricsListen? {
        guard let value else { return nil }
        guard case .object(let members) = value else {
            throw FleetdError(
                "\(path): /metrics must be an object", hint: #"for example "metrics": {"listen": "127.0.0.1:9477"}"#)
        }
        if let unknown = members.keys.sorted().first(where: { $0 != "listen" }) {
            throw FleetdError("\(path): /metrics/\(unknown) is not a setting", hint: "the one setting is listen")
        }
        guard let text = members["listen"]?.stringValue, let listen = MetricsListen(text) else {
            throw FleetdError(
                "\(path): /metrics/listen must be a loopback address and port, such as 127.0.0.1:9477 or [::1]:9477",
                hint: "the endpoint is unauthenticated: only this machine may read it (node_exporter or a local proxy)")
        }
        return listen
    }
}

extension FleetdConfiguration.Push {
    /// Reads `/push`; errors name the file and the JSON pointer.
    static func parse(_ value: JSONValue, in path: String) throws(FleetdError) -> Self {
        guard case .object(let members) = value else {
            throw FleetdError("\(path): /push must be an object", hint: "see docs/FLEET.md, \"Push\"")
        }
        let known = ["caFile", "reconnectWindowSeconds", "servers"]
        if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
            throw FleetdError(
                "\(path): /push/\(unknown) is not a setting", hint: "the settings are \(known.joined(separator: ", "))")
        }
        guard case .array(let list) = members["servers"], !list.isEmpty else {
            throw FleetdError(
                "\(path): /push/servers must be a non-empty array of URLs",
                hint: "e.g. [\"tls://nats.example.com:4222\"]")
        }
        var servers: [String] = []
        for (index, item) in list.enumerated() {
            guard let text = item.stringValue, let url = URL(string: text), ["tls", "nats"].contains(url.scheme ?? ""),
                url.host != nil
            else {
                throw FleetdError(
                    "\(path): /push/servers/\(index) must be a tls:// or nats:// URL",
                    hint: "e.g. tls://nats.example.com:4222")
            }
            servers.append(text)
        }
        var caFile: String?
        if let member = members["caFile"] {
            guard let text = member.stringValue, !text.isEmpty else {
                throw FleetdError(
                    "\(path): /push/caFile must be a non-empty string", hint: "a PEM file of CA certificates")
            }
            caFile = text
        }
        var window = 10.0
        if let member = members["reconnectWindowSeconds"] {
            guard let seconds = member.doubleValue, seconds > 0, seconds <= 600 else {
                throw FleetdError(
                    "\(path): /push/reconnectWindowSeconds must be a number of seconds above 0 and at most 600",
                    hint: "10 spreads 10,000 machines' reconnections to about 1,000 a second")
            }
            window = seconds
        }
        return Self(servers: servers, caFile: caFile, reconnectWindowSeconds: window)
    }
}
