import CordonProtocol
import Foundation

/// fleetd's settings, `/etc/cordon/fleet.json` (docs/FLEET.md):
/// ```json
/// { "repository": "https://fleet.example.com/cordon/", "caFile": "/etc/cordon/fleet-ca.pem",
///   "intervalSeconds": 300, "reportURL": "https://fleet.example.com/reports/",
///   "push": { "servers": ["tls://nats.example.com:4222"], "caFile": "/etc/cordon/nats-ca.pem" } }
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

    /// Where fleetd listens for the doorbell: NATS servers, and the CA their TLS certificates chain to.
    public struct Push: Sendable, Equatable {
        /// `tls://host:port` (or `nats://` for a server on this machine or a test).
        public var servers: [String]
        public var caFile: String?

        public init(servers: [String], caFile: String? = nil) {
            self.servers = servers
            self.caFile = caFile
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
        let known: Set = ["repository", "caFile", "intervalSeconds", "reportURL", "trustedRoot", "push"]
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
        return configuration
    }
}

extension FleetdConfiguration.Push {
    /// Reads `/push`; errors name the file and the JSON pointer.
    static func parse(_ value: JSONValue, in path: String) throws(FleetdError) -> Self {
        guard case .object(let members) = value else {
            throw FleetdError("\(path): /push must be an object", hint: "see docs/FLEET.md, \"Push\"")
        }
        if let unknown = members.keys.sorted().first(where: { !["servers", "caFile"].contains($0) }) {
            throw FleetdError("\(path): /push/\(unknown) is not a setting", hint: "the settings are caFile, servers")
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
        return Self(servers: servers, caFile: caFile)
    }
}
