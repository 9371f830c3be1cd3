import CordonProtocol
import Testing

@testable import CordonPolicy

/// The `network` section (docs/ARCHITECTURE.md, "Pinned channel"): parsing, who may set what,
/// the merge and the resolution into the wire type.
@Suite("The network section")
struct NetworkPolicySectionTests {
    typealias Support = ParserTestSupport
    typealias Network = PolicyKeys.Network

    static let pinA = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    static let pinB = "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBfzCCASWgAwIBAgIUb2Y0q5y5LwQ2m1m8eZbJm0wG1ZQwCgYIKoZIzj0EAwIw
        FTETMBEGA1UEAwwKQ29yZG9uIENBMB4XDTI0MDEwMTAwMDAwMFoXDTM0MDEwMTAw
        -----END CERTIFICATE-----
        """

    static func document(_ network: String, overrides: String = "[]") -> String {
        #"{"schema": "cordon.policy.v1", "network": \#(network), "overrides": \#(overrides)}"#
    }

    static func policy(_ texts: [(String, String)]) throws -> EffectivePolicy {
        let documents = try texts.map { path, text in
            (try Support.parse(text).get(), PolicySource(path: path, origin: .admin))
        }
        return EffectivePolicy.merge(documents, fallback: (BuiltinPolicy.document, BuiltinPolicy.source))
    }

    @Test func aFullSectionParses() throws {
        let escaped = Self.certificate.replacingOccurrences(of: "\n", with: "\\n")
        let text = Self.document(
            #"""
            {"pins": [{"hosts": ["api.example.com", "*.example.com", "192.0.2.1"], "pinSha256": ["\#(Self.pinA)"],
                       "caCertificates": ["\#(escaped)"]}],
             "unpinnedHosts": "deny",
             "clientCertificate": {"certificate": "/etc/cordon/client.pem", "key": "/etc/cordon/client.key"}}
            """#)
        let settings = try EffectivePolicy(
            document: Support.parse(text).get(), source: PolicySource(path: "/etc/net.json", origin: .admin)
        ).base
        #expect(
            settings[Network.pins].value.entries == [
                NetworkPinEntry(
                    hosts: ["api.example.com", "*.example.com", "192.0.2.1"], pinSha256: [Self.pinA],
                    caCertificates: [Self.certificate])
            ])
        #expect(settings[Network.unpinnedHosts].value == .deny)
        #expect(
            settings[Network.clientCertificate].value
                == ClientCertificateEntry(certificate: "/etc/cordon/client.pem", key: "/etc/cordon/client.key"))
    }

    @Test(
        "a pin-sha256 value is base64 of exactly 32 bytes",
        arguments: [
            ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", true),
            ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU", false),  // no padding
            ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=", false),  // non-zero unused bits
            ("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=", false),  // base64url
            ("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=AAAA", false),  // 35 bytes
            ("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", false),
            ("", false),
        ])
    func pinValues(value: String, valid: Bool) {
        #expect(NetworkRules.isPinSHA256(value) == valid)
        let messages = Support.messages(
            Self.document(#"{"pins": [{"hosts": ["a.example"], "pinSha256": ["\#(value)"]}]}"#))
        #expect(messages.isEmpty == valid, "\(messages)")
    }

    @Test func aPrivateKeyPastedAsACertificateIsRefusedWithoutRepeatingIt() {
        let body = "MC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        let key = "-----BEGIN PRIVATE KEY-----\\n\(body)\\n-----END PRIVATE KEY-----"
        let diagnostics = Support.diagnostics(
            Self.document(#"{"pins": [{"hosts": ["a.example"], "caCertificates": ["\#(key)"]}]}"#))
        #expect(diagnostics.map(\.pointer) == ["/network/pins/0/caCertificates/0"])
        #expect(diagnostics.first?.message.contains("private key") == true)
        #expect(!diagnostics.contains { $0.description.contains(body) }, "the key is never repeated")
    }

    @Test func aUserFileCannotSetPinsOrAClientCertificate() {
        let pins = #"{"pins": [{"hosts": ["a.example"], "pinSha256": ["\#(Self.pinA)"]}]}"#
        let refused = Support.diagnostics(Self.document(pins), origin: .user)
        #expect(refused.map(\.pointer) == ["/network/pins"])
        #expect(refused.first?.message.contains("belongs in an admin policy") == true)
        let client = #"{"clientCertificate": {"certificate": "/home/u/c.pem", "key": "/home/u/c.key"}}"#
        #expect(
            Support.diagnostics(Self.document(client), origin: .user).map(\.pointer) == [
                "/network/clientCertificate"
            ])
        let inOverride = Support.diagnostics(
            Self.document("{}", overrides: #"[{"apps": ["com.example.mail"], "network": \#(pins)}]"#), origin: .user)
        #expect(inOverride.map(\.pointer) == ["/overrides/0/network/pins"])
        // Tightening is allowed.
        #expect(Support.diagnostics(Self.document(#"{"unpinnedHosts": "deny"}"#), origin: .user).isEmpty)
    }

    @Test func entriesOfEveryAdminFileCombineEachWithItsSource() throws {
        let policy = try Self.policy([
            (
                "/etc/cordon/policy.d/10-a.json",
                Self.document(#"{"pins": [{"hosts": ["api.example.com"], "pinSha256": ["\#(Self.pinA)"]}]}"#)
            ),
            (
                "/etc/cordon/policy.d/20-b.json",
                Self.document(
                    #"{"pins": [{"hosts": ["*.example.com"], "pinSha256": ["\#(Self.pinB)"]}, {"hosts": ["api.example.com"], "pinSha256": ["\#(Self.pinB)"]}], "unpinnedHosts": "deny"}"#,
                    overrides:
                        #"[{"apps": ["com.example.mail"], "network": {"pins": [{"hosts": ["mail.example.com"], "pinSha256": ["\#(Self.pinA)"]}]}}]"#
                )
            ),
        ])
        let notes = policy.networkPolicy(appId: "com.example.notes")
        #expect(
            notes.pins.map(\.source) == [
                "/etc/cordon/policy.d/10-a.json#/network/pins/0", "/etc/cordon/policy.d/20-b.json#/network/pins/0",
                "/etc/cordon/policy.d/20-b.json#/network/pins/1",
            ])
        #expect(
            notes.pins[2]
                == NetworkPolicy.Pin(hosts: ["api.example.com"], pinSha256: [Self.pinB], source: notes.pins[2].source))
        #expect(notes.unpinnedHosts == "deny")
        #expect(notes.unpinnedHostsSource == "/etc/cordon/policy.d/20-b.json#/network/unpinnedHosts")
        let mail = policy.networkPolicy(appId: "com.example.mail")
        #expect(mail.pins.count == 4)
        #expect(mail.pins.last?.source == "/etc/cordon/policy.d/20-b.json#/overrides/0/network/pins/0")
        // Files in the other order give the same answer.
        let reversed = try Self.policy([
            (
                "/etc/cordon/policy.d/20-b.json",
                Self.document(
                    #"{"pins": [{"hosts": ["*.example.com"], "pinSha256": ["\#(Self.pinB)"]}, {"hosts": ["api.example.com"], "pinSha256": ["\#(Self.pinB)"]}], "unpinnedHosts": "deny"}"#,
                    overrides:
                        #"[{"apps": ["com.example.mail"], "network": {"pins": [{"hosts": ["mail.example.com"], "pinSha256": ["\#(Self.pinA)"]}]}}]"#
                )
            ),
            (
                "/etc/cordon/policy.d/10-a.json",
                Self.document(#"{"pins": [{"hosts": ["api.example.com"], "pinSha256": ["\#(Self.pinA)"]}]}"#)
            ),
        ])
        #expect(reversed.networkPolicy(appId: "com.example.mail") == mail)
    }

    @Test func withoutAFileTheBuiltinDefaultPinsNothing() throws {
        let policy = try Self.policy([])
        let answer = policy.networkPolicy(appId: "com.example.notes")
        #expect(
            answer
                == NetworkPolicy(
                    pins: [], unpinnedHosts: "systemTrust", unpinnedHostsSource: "built-in default", onLock: "refuseNew"
                ))
    }

    /// `network.onLock` (issue #32): `refuseNew` unless a file says otherwise; the strictest of
    /// the files wins (`cut` over `refuseNew` over `keep`), a user file may tighten it, and the
    /// app's policy carries it to the channel.
    @Test func onLockDefaultsToRefuseNewAndTheStrictestWins() throws {
        #expect(try Self.policy([]).networkPolicy(appId: "a.b").onLock == "refuseNew")
        let keep = Self.document(#"{"onLock": "keep"}"#)
        let cut = Self.document(#"{"onLock": "cut"}"#)
        #expect(try Self.policy([("/x/1.json", keep)]).networkPolicy(appId: "a.b").onLock == "keep")
        #expect(try Self.policy([("/x/1.json", keep), ("/x/2.json", cut)]).networkPolicy(appId: "a.b").onLock == "cut")
        #expect(Support.diagnostics(Self.document(#"{"onLock": "cut"}"#), origin: .user).isEmpty)
        #expect(!Support.diagnostics(Self.document(#"{"onLock": "sometimes"}"#), origin: .admin).isEmpty)
    }

    @Test func twoClientCertificatesResolveToTheOneThatSortsFirstWhateverTheOrder() throws {
        let first = Self.document(#"{"clientCertificate": {"certificate": "/etc/b.pem", "key": "/etc/b.key"}}"#)
        let second = Self.document(#"{"clientCertificate": {"certificate": "/etc/a.pem", "key": "/etc/a.key"}}"#)
        let one = try Self.policy([("/x/1.json", first), ("/x/2.json", second)]).networkPolicy(appId: "a.b")
        let two = try Self.policy([("/x/2.json", second), ("/x/1.json", first)]).networkPolicy(appId: "a.b")
        #expect(one.clientCertificate == NetworkPolicy.ClientCertificate(certificate: "/etc/a.pem", key: "/etc/a.key"))
        #expect(one == two)
    }

    @Test func showSummarisesCertificatesAndJSONKeepsThem() throws {
        let escaped = Self.certificate.replacingOccurrences(of: "\n", with: "\\n")
        let policy = try Self.policy([
            ("/x/1.json", Self.document(#"{"pins": [{"hosts": ["a.example"], "caCertificates": ["\#(escaped)"]}]}"#))
        ])
        let shown = try #require(policy.describeEffective().first { $0.path == "/network/pins" })
        #expect(shown.value.contains("PEM CERTIFICATE, \(Self.certificate.utf8.count) characters, fnv1a "))
        #expect(!shown.value.contains("BEGIN"))
        #expect(shown.json.contains("-----BEGIN CERTIFICATE-----\\n"))
    }
}
