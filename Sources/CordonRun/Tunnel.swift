import Foundation

/// One `cordon run --tunnel NAME=https://host:port` (docs/CLI.md, "cordon run"): what the
/// program connects to locally, and the pinned upstream the bytes go to.
public struct Tunnel: Sendable, Equatable {
    /// As written (letters, digits, `_`); the environment names use it upper-cased.
    public let name: String
    /// The upstream's host, lower-cased.
    public let host: String
    /// The upstream's port (443 unless given).
    public let port: Int

    /// Parses `NAME=https://host[:port]`; the message names what is wrong.
    public init(parsing text: String) throws(TunnelSpecError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw TunnelSpecError(text: text, problem: "give NAME=https://host:port")
        }
        let name = String(text[..<equals])
        let url = String(text[text.index(after: equals)...])
        guard let first = name.unicodeScalars.first, CharacterSet.letters.contains(first), name.count <= 32,
            name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") })
        else {
            throw TunnelSpecError(
                text: text, problem: "the name must be 1-32 ASCII letters, digits or _, starting with a letter")
        }
        guard let components = URLComponents(string: url), components.scheme == "https",
            let host = components.host, !host.isEmpty,
            components.path.isEmpty || components.path == "/", components.query == nil, components.user == nil
        else {
            throw TunnelSpecError(text: text, problem: "the upstream must be https://host[:port] (no path)")
        }
        self.name = name
        self.host = host.lowercased()
        self.port = components.port ?? 443
    }

    /// `CORDON_TUNNEL_<NAME>`: `unix:` and the socket's path.
    public var unixVariable: String { "CORDON_TUNNEL_\(name.uppercased())" }
    /// `CORDON_TUNNEL_<NAME>_TCP`: `127.0.0.1:` and the port.
    public var tcpVariable: String { unixVariable + "_TCP" }
}

/// A `--tunnel` value that is not `NAME=https://host:port`.
public struct TunnelSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value as given.
    public let text: String
    /// What is wrong with it.
    public let problem: String

    /// `--tunnel TEXT: PROBLEM`.
    public var description: String { "--tunnel \(text): \(problem)" }
}
