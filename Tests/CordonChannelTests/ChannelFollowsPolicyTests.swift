import ChannelTestPeers
import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// Issue #32: the channel follows policy changes and the lock (`network.onLock`), waits for the
/// first key event without a timer, and does mutual TLS against a server that requires it.
@Suite("SecureChannel follows the policy and the lock")
struct ChannelFollowsPolicyTests {
    typealias Fixture = SecureChannelTests.Fixture

    static func event(_ payload: CordonEvent.Payload, _ state: LifecycleState) -> CordonEvent {
        CordonEvent(seq: 1, payload: payload, reason: .userRequest, time: 0, state: state)
    }

    static func policy(_ base: NetworkPolicy, onLock: String? = nil, pins: [String]? = nil) -> NetworkPolicy {
        var policy = base
        policy.onLock = onLock
        if let pins { policy.pins[0].pinSha256 = pins }
        return policy
    }

    /// A request in flight to a server whose key the new policy no longer pins is cut at once,
    /// with the reason; one whose key is still pinned goes on; the next request uses the new pins.
    @Test func aPolicyChangeCutsConnectionsToAKeyNoLongerPinned() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("stall-response")
        defer { peer.stop() }
        let gate = ChannelGate(appId: "com.example.notes", available: true)
        await gate.apply(fixture.policy)
        let channel = try fixture.channel(gate: gate)
        let url = "https://a.example.test:\(peer.port)/"
        let request = Task { () -> Result<SecureChannel.Response, SecureChannelError> in
            do throws(SecureChannelError) {
                return .success(try await channel.request(url: url))
            } catch { return .failure(error) }
        }
        await gate.opened(atLeast: 1)
        // The same pins: nothing is cut.
        #expect(await gate.apply(fixture.policy).isEmpty)
        #expect(gate.openConnections == 1)
        let other = try fixture.pki.leaf("other", names: ["a.example.test"])
        let repinned = Self.policy(fixture.policy, pins: [try fixture.pki.pin(other.certificate)])
        let cut = await gate.apply(repinned)
        #expect(cut.count == 1)
        let error = await request.value.failure
        guard case .policyChanged(let host, let reason) = error else {
            Issue.record("expected policyChanged, got \(String(describing: error))")
            return
        }
        #expect(host == "a.example.test")
        #expect(reason.contains("is not pinned by a.example.test"), "\(reason)")
        #expect(gate.openConnections == 0)
        // A new request is verified against the new pins.
        let www = try fixture.peer("www")
        defer { www.stop() }
        let refused = await SecureChannelTests.failure { () async throws(SecureChannelError) in
            try await channel.request(url: "https://a.example.test:\(www.port)/")
        }
        guard case .pinMismatch = refused else {
            Issue.record("expected pinMismatch, got \(String(describing: refused))")
            return
        }
        #expect(channel.policy == repinned)
    }

    /// `network.onLock`: `refuseNew` (the default) refuses new requests while locked and lets
    /// open ones finish; `cut` also cuts the open ones; `keep` changes nothing.
    @Test func theLockFollowsNetworkOnLock() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("stall-response")
        defer { peer.stop() }
        let url = "https://a.example.test:\(peer.port)/"
        for onLock in [nil, "refuseNew", "cut", "keep"] {
            let gate = ChannelGate(appId: "com.example.notes")
            gate.follow(Self.event(.state, .unlocked))
            await gate.apply(Self.policy(fixture.policy, onLock: onLock))
            let channel = try fixture.channel(gate: gate)
            let request = Task { () -> Result<SecureChannel.Response, SecureChannelError> in
                do throws(SecureChannelError) {
                    return .success(try await channel.request(url: url))
                } catch { return .failure(error) }
            }
            await gate.opened(atLeast: 1)
            gate.follow(Self.event(.didLock, .lockedKeyHeld))
            switch onLock ?? "refuseNew" {
            case "keep":
                #expect(gate.isOpen)
                #expect(gate.openConnections == 1)
                request.cancel()
                peer.stop()
            case "cut":
                #expect(gate.refusal == .locked(appId: "com.example.notes", onLock: "cut"))
                #expect(await request.value.failure == .cutOnLock(appId: "com.example.notes"))
            default:
                #expect(gate.refusal == .locked(appId: "com.example.notes", onLock: "refuseNew"))
                #expect(gate.openConnections == 1, "an open request finishes under refuseNew")
                let refused = await SecureChannelTests.failure { () async throws(SecureChannelError) in
                    try await channel.request(url: url)
                }
                #expect(refused == .locked(appId: "com.example.notes", onLock: "refuseNew"))
                gate.follow(Self.event(.didUnlock, .unlocked))
                #expect(gate.isOpen)
            }
        }
    }

    /// The wait for the first key event is the event itself: no timer. A request cancelled while
    /// it waits ends at once, saying so; the event releases one that waits.
    @Test func theFirstKeyEventIsAwaitedWithoutATimer() async throws {
        let fixture = try Fixture()
        let peer = try fixture.peer("www")
        defer { peer.stop() }
        let gate = ChannelGate(appId: "com.example.notes")
        let channel = try fixture.channel(gate: gate)
        let url = "https://a.example.test:\(peer.port)/"
        let cancelled = Task { () -> SecureChannelError? in
            await SecureChannelTests.failure { () async throws(SecureChannelError) in
                try await channel.request(url: url)
            }
        }
        cancelled.cancel()
        let error = await cancelled.value
        #expect(
            error
                == .keyUnavailable(
                    appId: "com.example.notes",
                    reason: "the request was cancelled before the agent said whether the key is available"))
        let waiting = Task { () throws -> Int in try await channel.request(url: url).status }
        gate.follow(Self.event(.state, .unlocked))
        #expect(try await waiting.value == 200)
    }

    /// Mutual TLS against `openssl s_server -Verify 1`, which requires a client certificate: with
    /// the policy's client certificate the request goes through, without it the server refuses
    /// the handshake.
    @Test func mutualTLSAgainstAServerThatRequiresAClientCertificate() async throws {
        let fixture = try Fixture()
        let client = try fixture.pki.leaf("client", names: ["client.example.test"], usage: "clientAuth")
        let server = try OpenSSLServer(
            arguments: [
                "-cert", fixture.leaf.certificate, "-key", fixture.leaf.key, "-CAfile", fixture.pki.caCertificate,
                "-Verify", "1", "-verify_return_error", "-www",
            ])
        defer { server.stop() }
        var withClient = fixture.policy
        withClient.clientCertificate = NetworkPolicy.ClientCertificate(certificate: client.certificate, key: client.key)
        let channel = try SecureChannel(
            policy: withClient, configuration: .init(addressOverrides: ["a.example.test": "127.0.0.1"]))
        let response = try await channel.request(url: "https://a.example.test:\(server.port)/")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("client.example.test"))
        let without = try SecureChannel(
            policy: fixture.policy, configuration: .init(addressOverrides: ["a.example.test": "127.0.0.1"]))
        let refused = await SecureChannelTests.failure { () async throws(SecureChannelError) in
            try await without.request(url: "https://a.example.test:\(server.port)/")
        }
        #expect(refused != nil)
    }
}

/// `openssl s_server` on a free port, started and waited for (its `ACCEPT` line); stopped by
/// `stop()`.
final class OpenSSLServer {
    let process = Process()
    let port: Int

    init(arguments: [String]) throws {
        port = try TestPorts.free()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "s_server", "-accept", "127.0.0.1:\(port)"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = Pipe()
        try process.run()
        var text = ""
        while !text.contains("ACCEPT") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ChannelCommand.Failure(description: "s_server did not start: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// SIGKILL: a test process that ignores SIGTERM (as `cordon run` does) passes that on.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
