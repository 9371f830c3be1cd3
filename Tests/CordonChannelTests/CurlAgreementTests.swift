import ChannelTestPeers
import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The pinned channel against curl, the reference: the same server, the same trust and pins,
/// the same host name; Cordon and curl must accept and refuse the same cases, and Cordon must say why.
@Suite("SecureChannel agrees with curl")
struct CurlAgreementTests {
    static let source = "/etc/cordon/policy.d/10-net.json#/network/pins"

    /// curl with `--cacert` (when given) and `--pinnedpubkey`; true when it fetched the page.
    static func curlAccepts(host: String, port: Int, caFile: String?, pins: [String]) throws -> Bool {
        var arguments = [
            "curl", "-sS", "-o", "/dev/null", "--max-time", "30", "--resolve", "\(host):\(port):127.0.0.1",
        ]
        if let caFile { arguments += ["--cacert", caFile] }
        if !pins.isEmpty { arguments += ["--pinnedpubkey", pins.map { "sha256//" + $0 }.joined(separator: ";")] }
        arguments.append("https://\(host):\(port)/")
        return try ChannelCommand.run(arguments).status == 0
    }

    /// The policy curl's options stand for: the host's chain must verify up to the CA (entry 0)
    /// and, with pins, show one of them (entry 1).
    static func policy(hosts: [String], caPEM: String, pins: [String], unpinned: String = "deny") -> NetworkPolicy {
        var entries = [NetworkPolicy.Pin(hosts: hosts, caCertificates: [caPEM], source: "\(source)/0")]
        if !pins.isEmpty { entries.append(NetworkPolicy.Pin(hosts: hosts, pinSha256: pins, source: "\(source)/1")) }
        return NetworkPolicy(
            pins: entries, unpinnedHosts: unpinned,
            unpinnedHostsSource: "/etc/cordon/policy.d/10-net.json#/network/unpinnedHosts")
    }

    static func cordon(host: String, port: Int, policy: NetworkPolicy) async -> Result<Int, SecureChannelError> {
        do throws(SecureChannelError) {
            let channel = try SecureChannel(
                policy: policy, configuration: .init(addressOverrides: [host: "127.0.0.1"]))
            let response = try await channel.request(url: "https://\(host):\(port)/")
            return .success(response.status)
        } catch {
            return .failure(error)
        }
    }

    @Test func rightPinIsAcceptedByBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("good", names: ["a.example.test"])
        let pin = try pki.pin(leaf.certificate)
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [pin])
        let result = await Self.cordon(host: "a.example.test", port: peer.port, policy: policy)
        #expect(try Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: [pin]))
        #expect(try result.get() == 200)
    }

    /// docs/THREAT-MODEL.md: a server with the wrong key is refused even with a valid chain.
    @Test func wrongKeyWithValidChainIsRefusedByBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("good", names: ["a.example.test"])
        let other = try pki.leaf("other", names: ["a.example.test"])
        let served = try pki.pin(leaf.certificate)
        let expected = try pki.pin(other.certificate)
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [expected])
        let result = await Self.cordon(host: "a.example.test", port: peer.port, policy: policy)
        #expect(
            try !Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: [expected]))
        // The chain itself is valid: curl with the CA alone accepts it.
        #expect(try Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: []))
        let error = SecureChannelError.pinMismatch(
            host: "a.example.test", pattern: "a.example.test", source: "\(Self.source)/1", expected: [expected],
            presented: [served])
        #expect(result.failure == error)
        #expect(error.description.contains(served) && error.description.contains(expected))
    }

    /// The pin is the leaf's key, as curl's `--pinnedpubkey` checks it (issue #32): a pin of the
    /// CA's key, whose certificate is in the verified chain, is refused by both; the leaf's pin is
    /// accepted by both, with the same server.
    @Test func aPinOfTheCAKeyIsRefusedByBothOnlyTheLeafsKeyCounts() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("good", names: ["a.example.test"])
        let caPin = try pki.pin(pki.caCertificate)
        let leafPin = try pki.pin(leaf.certificate)
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let byCA = await Self.cordon(
            host: "a.example.test", port: peer.port,
            policy: Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [caPin]))
        #expect(
            try !Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: [caPin]))
        #expect(
            byCA.failure
                == .pinMismatch(
                    host: "a.example.test", pattern: "a.example.test", source: "\(Self.source)/1", expected: [caPin],
                    presented: [leafPin]))
        let byLeaf = await Self.cordon(
            host: "a.example.test", port: peer.port,
            policy: Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [leafPin]))
        #expect(
            try Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: [leafPin]))
        #expect(try byLeaf.get() == 200)
    }

    @Test func expiredCertificateIsRefusedByBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("expired", names: ["a.example.test"], days: -1)
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [])
        let result = await Self.cordon(host: "a.example.test", port: peer.port, policy: policy)
        #expect(try !Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: []))
        guard case .certificateExpired(let host, let subject, _)? = result.failure else {
            Issue.record("expected certificateExpired, got \(result)")
            return
        }
        #expect(host == "a.example.test" && subject.contains("a.example.test"))
    }

    @Test func wrongHostIsRefusedByBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("b", names: ["b.example.test"])
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [])
        let result = await Self.cordon(host: "a.example.test", port: peer.port, policy: policy)
        #expect(try !Self.curlAccepts(host: "a.example.test", port: peer.port, caFile: pki.caCertificate, pins: []))
        guard case .hostNameMismatch(let host, _)? = result.failure else {
            Issue.record("expected hostNameMismatch, got \(result)")
            return
        }
        #expect(host == "a.example.test")
    }

    /// `*.example.test` stands for one label: `w.example.test` is accepted, `a.b.example.test` refused.
    @Test func wildcardMatchesExactlyOneLabelForBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("wild", names: ["*.example.test"])
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["*.example.test"], caPEM: pki.caPEM, pins: [])
        let one = await Self.cordon(host: "w.example.test", port: peer.port, policy: policy)
        #expect(try Self.curlAccepts(host: "w.example.test", port: peer.port, caFile: pki.caCertificate, pins: []))
        #expect(try one.get() == 200)
        let two = await Self.cordon(host: "a.b.example.test", port: peer.port, policy: policy)
        #expect(try !Self.curlAccepts(host: "a.b.example.test", port: peer.port, caFile: pki.caCertificate, pins: []))
        #expect(
            two.failure
                == .hostNotPermitted(
                    host: "a.b.example.test",
                    unpinnedHostsSource: "/etc/cordon/policy.d/10-net.json#/network/unpinnedHosts"))
    }

    /// A host no pattern names under `systemTrust`: the system's roots do not know the test CA.
    @Test func unpinnedHostUnderSystemTrustUsesTheSystemRootsLikeCurl() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("c", names: ["c.example.test"])
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["a.example.test"], caPEM: pki.caPEM, pins: [], unpinned: "systemTrust")
        let result = await Self.cordon(host: "c.example.test", port: peer.port, policy: policy)
        #expect(try !Self.curlAccepts(host: "c.example.test", port: peer.port, caFile: nil, pins: []))
        guard case .untrustedChain(let host, let roots, _)? = result.failure else {
            Issue.record("expected untrustedChain, got \(result)")
            return
        }
        #expect(host == "c.example.test" && roots.contains("system roots"))
    }

    @Test func addressHostWithPinIsAcceptedByBoth() async throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf("ip", names: ["127.0.0.1", "localhost"])
        let pin = try pki.pin(leaf.certificate)
        let peer = try TLSPeer(mode: "www", certificate: leaf.certificate, key: leaf.key)
        defer { peer.stop() }
        let policy = Self.policy(hosts: ["127.0.0.1"], caPEM: pki.caPEM, pins: [pin])
        let result = await Self.cordon(host: "127.0.0.1", port: peer.port, policy: policy)
        #expect(try Self.curlAccepts(host: "127.0.0.1", port: peer.port, caFile: pki.caCertificate, pins: [pin]))
        #expect(try result.get() == 200)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
