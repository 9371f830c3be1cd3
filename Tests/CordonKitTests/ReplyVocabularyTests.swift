import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// The SDK reads replies in the protocol's one typed vocabulary; a spelling it does not know (a
/// newer agent's) is a clear `protocolViolation` naming the parameter, never another value.
@Suite struct ReplyVocabularyTests {
    func reply(action: String) -> Data {
        Data(
            #"{"parameters":{"decision":{"allowed":false,"action":"\#(action)","reason":"r","rules":["f#/p"]}}}"#
                .utf8)
    }

    @Test func aKnownActionDecodesTyped() throws {
        let decoded = try VarlinkClientConnection.decode(CheckReply.self, from: reply(action: "document.save"))
        #expect(decoded.decision.action == .documentSave)
        #expect(decoded.decision.rules == ["f#/p"])
    }

    @Test func anUnknownActionIsAProtocolViolationNamingTheParameter() throws {
        #expect(
            throws: CordonClientError.protocolViolation(
                "unexpected reply: org.varlink.service.InvalidParameter (decision)")
        ) {
            try VarlinkClientConnection.decode(CheckReply.self, from: reply(action: "document.print"))
        }
    }
}
