import Testing

@testable import CordonRun

/// `Tunnel(parsing:)`: what `--tunnel NAME=https://host[:port]` accepts, what it refuses and why,
/// and the environment names the program gets.
@Suite struct TunnelTests {
    @Test func aFullSpecParses() throws {
        let tunnel = try Tunnel(parsing: "api=https://API.Example.com:8443")
        #expect(tunnel.name == "api")
        #expect(tunnel.host == "api.example.com", "the host is lower-cased")
        #expect(tunnel.port == 8443)
        #expect(tunnel.unixVariable == "CORDON_TUNNEL_API")
        #expect(tunnel.tcpVariable == "CORDON_TUNNEL_API_TCP")
    }

    @Test func thePortDefaultsTo443AndATrailingSlashIsNoPath() throws {
        let tunnel = try Tunnel(parsing: "Mail_2=https://mail.example.com/")
        #expect(tunnel.port == 443)
        #expect(tunnel.unixVariable == "CORDON_TUNNEL_MAIL_2")
    }

    @Test(arguments: [
        ("api", "give NAME=https://host:port"),
        ("=https://example.com", "the name must be 1-32 ASCII letters, digits or _, starting with a letter"),
        ("1api=https://example.com", "the name must be 1-32 ASCII letters, digits or _, starting with a letter"),
        ("a-b=https://example.com", "the name must be 1-32 ASCII letters, digits or _, starting with a letter"),
        ("é=https://example.com", "the name must be 1-32 ASCII letters, digits or _, starting with a letter"),
        (
            String(repeating: "a", count: 33) + "=https://example.com",
            "the name must be 1-32 ASCII letters, digits or _, starting with a letter"
        ),
        ("api=http://example.com", "the upstream must be https://host[:port] (no path)"),
        ("api=https://example.com/v1", "the upstream must be https://host[:port] (no path)"),
        ("api=https://example.com?q=1", "the upstream must be https://host[:port] (no path)"),
        ("api=https://user@example.com", "the upstream must be https://host[:port] (no path)"),
        ("api=https://", "the upstream must be https://host[:port] (no path)"),
    ])
    func aBadSpecIsRefusedWithItsProblem(_ text: String, _ problem: String) {
        #expect(throws: TunnelSpecError(text: text, problem: problem)) { try Tunnel(parsing: text) }
        #expect("\(TunnelSpecError(text: text, problem: problem))" == "--tunnel \(text): \(problem)")
    }

    @Test func aNameOf32LettersIsTheLongest() throws {
        let name = String(repeating: "a", count: 32)
        #expect(try Tunnel(parsing: "\(name)=https://example.com").name == name)
    }
}
