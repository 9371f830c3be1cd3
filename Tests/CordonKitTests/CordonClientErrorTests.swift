import CordonKit
import CordonProtocol
import Foundation
import Testing

@Suite("CordonClientError and typed agent errors")
struct CordonClientErrorTests {
    @Test func descriptions() {
        let unavailable = CordonClientError.agentUnavailable(
            socket: "/run/user/1000/cordon/agent.sock", reason: "ENOENT")
        #expect(unavailable.description == "cannot reach cordond at /run/user/1000/cordon/agent.sock: ENOENT")
        #expect(CordonClientError.connectionClosed.description == "the connection to cordond closed")
        let remote = CordonClientError.remote(.methodNotFound("io.cordon.Agent.Nope"))
        #expect(remote.description == "cordond answered org.varlink.service.MethodNotFound")
        #expect(
            CordonClientError.protocolViolation("no key").description == "unexpected answer from cordond: no key")
    }

    @Test func equality() {
        #expect(CordonClientError.connectionClosed == .connectionClosed)
        #expect(CordonClientError.remote(.expectedMore) != .remote(.permissionDenied))
    }

    private static let cordonErrors: [CordonError] = [
        .notInitialized, .alreadyInitialized, .wrongPasscode(attemptsLeft: 3, retryAfterSeconds: 1.5),
        .retryLater(retryAfterSeconds: 30), .passcodeRequired, .invalidPasscode(reason: "too short"), .locked,
        .busy, .notRegistered, .alreadyRegistered(appId: "com.example.a"),
        .invalidAppId(appId: "x y", reason: "spaces"), .keyUnavailable(state: "lockedNoKey"),
        .notManaged(appId: "com.example.b"), .subscriberTooSlow(limit: 8), .invalidToken,
        .unknownSequence(seq: 9), .internalError(reason: "disk"),
    ]

    @Test(arguments: cordonErrors)
    func agentErrorsRoundTripThroughVarlink(error: CordonError) throws {
        let varlink = error.varlinkError
        #expect(varlink.name.hasPrefix("io.cordon."))
        #expect(CordonError(varlink) == error)
        // Through JSON, as the SDK receives it.
        let data = VarlinkCodec().encodeError(varlink)
        struct Envelope: Decodable {
            var error: String
            var parameters: [String: JSONValue]?
        }
        let envelope = try JSONDecoder().decode(Envelope.self, from: data)
        #expect(CordonError(VarlinkError(name: envelope.error, parameters: envelope.parameters ?? [:])) == error)
    }

    @Test func foreignErrorsAreNotCordonErrors() {
        #expect(CordonError(.methodNotFound("x.Y")) == nil)
        #expect(CordonError(.invalidMessage(reason: "bad")) == nil)
        #expect(CordonError(VarlinkError(name: "io.cordon.Agent.SomethingNew")) == nil)
    }
}
