import ChannelTestPeers
import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// HTTP/1.1 and HTTP/2 through the pinned channel, bad servers, limits, and the app's key.
@Suite("SecureChannel")
struct SecureChannelTests {
    final class Fixture {
        let pki: TestPKI
        let leaf: (certificate: String, key: String)
        let policy: NetworkPolicy

        init() throws {
            pki = try TestPKI()
            leaf = try pki.leaf("good", names: ["a.example.test"])
            policy = NetworkPolicy(
                pins: [
                    NetworkPolicy.Pin(
                        hosts: ["a.example.test"], pinSha256: [try pki.pin(leaf.certificate)],
                        caCertificates: [pki.caPEM], source: "test.json#/network/pins/0")
                ], unpinnedHosts: "deny", unpinnedHostsSource: "built-in default")
        }

        func peer(_ mode: String) throws -> TLSPeer {
            try TLSPeer(mode: mode, certificate: leaf.certificate, key: leaf.key)
        }

        func channel(_ configuration: SecureChannel.Configuration = .init(), gate: ChannelGate? = nil)
            throws(SecureChannelError) -> SecureChannel
        {
            var configuration = configuration
            configuration.addressOverrides = ["a.example.test": "127.0.0.1"]
            return try SecureChannel(policy: policy, configuration: configuration, gate: gate)
        }
    }

    static func failure(_ body: () async throws(SecureChannelError) -> SecureChannel.Response) async
        -> SecureChannelError?
    {
        do throws(SecureChannelError) {
            let response = try await body()
            Issue.record("expected a refusal, got \(response.status)")
            return nil
        } catch { return error }
    }

    @Test func http11() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("www")
        defer { peer.stop() }
        let response = try await fixture.channel().request(
            "GET", url: "https://a.example.test:\(peer.port)/items?x=1", headers: [("accept", "text/plain")])
        #expect(response.status == 200)
        #expect(response.httpVersion == "HTTP/1.1")
        #expect(String(decoding: response.body, as: UTF8.self) == "hello /items?x=1\n")
        #expect(response.header("Content-Type") == "text/plain")
    }

    @Test func http2() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("h2")
        defer { peer.stop() }
        let response = try await fixture.channel().request("GET", url: "https://a.example.test:\(peer.port)/h2")
        #expect(response.status == 200)
        #expect(response.httpVersion == "HTTP/2")
        #expect(String(decoding: response.body, as: UTF8.self) == "h2 hello /h2\n")
    }

    @Test func aServerThatIsNotTLSFailsTheHandshake() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("nottls")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel().request(url: "https://a.example.test:\(peer.port)/")
        }
        guard case .handshakeFailed(let host, _)? = error else {
            Issue.record("expected handshakeFailed, got \(String(describing: error))")
            return
        }
        #expect(host == "a.example.test")
    }

    @Test func aStalledHandshakeTimesOut() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("stall")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel(.init(handshakeTimeout: .milliseconds(300))).request(
                url: "https://a.example.test:\(peer.port)/")
        }
        #expect(error == .timedOut(host: "a.example.test", stage: .handshake, seconds: 0.3))
    }

    @Test func garbageAfterTheHandshakeIsMalformed() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("garbage")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel().request(url: "https://a.example.test:\(peer.port)/")
        }
        guard case .malformedResponse(let host, _)? = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
        #expect(host == "a.example.test")
    }

    @Test func closeMidStreamIsTyped() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("midstream")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel().request(url: "https://a.example.test:\(peer.port)/")
        }
        #expect(error == .closedMidStream(host: "a.example.test"))
    }

    @Test func aStalledResponseTimesOut() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("stall-response")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel(.init(responseTimeout: .milliseconds(300))).request(
                url: "https://a.example.test:\(peer.port)/")
        }
        #expect(error == .timedOut(host: "a.example.test", stage: .response, seconds: 0.3))
    }

    @Test func anOversizedResponseIsRefused() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("www")
        defer { peer.stop() }
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel(.init(maxResponseBytes: 4)).request(url: "https://a.example.test:\(peer.port)/")
        }
        #expect(error == .responseTooLarge(host: "a.example.test", limit: 4))
    }

    @Test func anOversizedChainIsRefused() async throws {
        let fixture = try Fixture()
        // The server sends its leaf and the CA: two certificates, over a limit of one.
        let chain = fixture.pki.directory.appendingPathComponent("chain.pem").path
        let text =
            try String(contentsOfFile: fixture.leaf.certificate, encoding: .utf8) + fixture.pki.caPEM
        try Data(text.utf8).write(to: URL(fileURLWithPath: chain))
        let peer = try TLSPeer(mode: "www", certificate: chain, key: fixture.leaf.key)
        defer { peer.stop() }
        let verifier = ChannelVerifier(policy: fixture.policy, maxChainCertificates: 1)
        let connector = try ChannelConnector(
            verifier: verifier, alpn: [], addressOverrides: ["a.example.test": "127.0.0.1"])
        do throws(SecureChannelError) {
            let (channel, _) = try await connector.connect(host: "a.example.test", port: peer.port)
            channel.close(promise: nil)
            Issue.record("an oversized chain was accepted")
        } catch {
            guard case .chainTooLarge(let host, let certificates, _) = error else {
                Issue.record("expected chainTooLarge, got \(error)")
                return
            }
            #expect(host == "a.example.test" && certificates == 2)
        }
    }

    @Test func aHostNoPatternNamesIsRefusedBeforeConnecting() async throws {
        let fixture = try Fixture()
        // Nothing listens on port 9: a refusal after connecting would be connectFailed.
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel().request(url: "https://elsewhere.example.test:9/")
        }
        #expect(error == .hostNotPermitted(host: "elsewhere.example.test", unpinnedHostsSource: "built-in default"))
    }

    @Test func aBadURLIsTyped() async throws {
        let fixture = try Fixture()
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel().request(url: "http://a.example.test/")
        }
        #expect(error == .invalidURL("http://a.example.test/", reason: "the scheme must be https"))
    }

    @Test func noRequestWhileTheKeyIsUnavailable() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("www")
        defer { peer.stop() }
        let gate = ChannelGate(appId: "com.example.notes", available: true)
        gate.keyBecameUnavailable(reason: "logout")
        let error = await Self.failure { () async throws(SecureChannelError) in
            try await fixture.channel(gate: gate).request(url: "https://a.example.test:\(peer.port)/")
        }
        #expect(error == .keyUnavailable(appId: "com.example.notes", reason: "logout"))
        gate.keyBecameAvailable()
        let response = try await fixture.channel(gate: gate).request(url: "https://a.example.test:\(peer.port)/")
        #expect(response.status == 200)
    }

    @Test func revocationCutsARequestInFlight() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("stall-response")
        defer { peer.stop() }
        let gate = ChannelGate(appId: "com.example.notes", available: true)
        let channel = try fixture.channel(gate: gate)
        let url = "https://a.example.test:\(peer.port)/"
        let request = Task { () -> Result<SecureChannel.Response, SecureChannelError> in
            do throws(SecureChannelError) {
                return .success(try await channel.request(url: url))
            } catch { return .failure(error) }
        }
        await gate.opened(atLeast: 1)
        gate.follow(
            CordonEvent(
                seq: 7, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .logout, time: 0,
                state: .lockedNoKey))
        let error = await request.value.failure
        #expect(error == .revoked(appId: "com.example.notes", reason: "logout"))
        #expect(gate.openConnections == 0)
    }

    /// A posture revocation holds through the container's unlock: only the agent lifting it (reason
    /// `posture`) or a new agent reopens the gate.
    @Test func aPostureBlockOutlastsTheContainersUnlock() throws {
        let gate = ChannelGate(appId: "com.example.notes", available: true)
        func event(_ payload: CordonEvent.Payload, _ reason: EventReason, _ state: LifecycleState) -> CordonEvent {
            CordonEvent(seq: 1, payload: payload, reason: reason, time: 0, state: state)
        }
        gate.follow(event(.encryptionKeyUnavailable(ackDeadline: nil), .posture, .unlocked))
        #expect(gate.refusal == .keyUnavailable(appId: "com.example.notes", reason: "posture"))
        gate.follow(event(.encryptionKeyAvailable(), .userRequest, .unlocked))
        gate.follow(event(.state, .userRequest, .unlocked))
        #expect(gate.refusal == .keyUnavailable(appId: "com.example.notes", reason: "posture"))
        #expect(throws: SecureChannelError.keyUnavailable(appId: "com.example.notes", reason: "posture")) {
            _ = try gate.open { _ in }
        }
        gate.follow(event(.encryptionKeyAvailable(), .posture, .unlocked))
        #expect(gate.isOpen)
        gate.follow(event(.encryptionKeyUnavailable(ackDeadline: nil), .posture, .unlocked))
        gate.follow(event(.encryptionKeyUnavailable(ackDeadline: nil), .agentUnavailable, .lockedNoKey))
        gate.follow(event(.state, .startup, .unlocked))
        #expect(gate.isOpen, "a new agent says the posture anew")
    }

    @Test func policyErrorsNameTheirSource() throws {
        let bad = NetworkPolicy(
            pins: [NetworkPolicy.Pin(hosts: ["*"], source: "/etc/cordon/policy.d/1.json#/network/pins/0")],
            unpinnedHosts: "deny", unpinnedHostsSource: "built-in default")
        #expect(throws: SecureChannelError.self) { try ChannelVerifier(policy: bad).governance(host: "a.example.test") }
        do throws(SecureChannelError) {
            _ = try ChannelVerifier(policy: bad).governance(host: "a.example.test")
        } catch {
            guard case .invalidPolicy(let source, _) = error else {
                Issue.record("expected invalidPolicy, got \(error)")
                return
            }
            #expect(source == "/etc/cordon/policy.d/1.json#/network/pins/0/hosts/0")
        }
    }

    @Test func theMostSpecificPatternGoverns() throws {
        let policy = NetworkPolicy(
            pins: [
                NetworkPolicy.Pin(hosts: ["*.example.test"], pinSha256: ["AAAA"], source: "p#/0"),
                NetworkPolicy.Pin(hosts: ["api.example.test"], pinSha256: ["BBBB"], source: "p#/1"),
                NetworkPolicy.Pin(hosts: ["api.example.test", "*.example.test"], pinSha256: ["CCCC"], source: "p#/2"),
            ], unpinnedHosts: "systemTrust", unpinnedHostsSource: "p#/u")
        let verifier = ChannelVerifier(policy: policy)
        let api = try verifier.governance(host: "API.example.test.")
        #expect(api == .pinned(pattern: "api.example.test", entries: [policy.pins[1], policy.pins[2]]))
        let other = try verifier.governance(host: "www.example.test")
        #expect(other == .pinned(pattern: "*.example.test", entries: [policy.pins[0], policy.pins[2]]))
        #expect(try verifier.governance(host: "example.test") == .systemTrust)
    }
}
