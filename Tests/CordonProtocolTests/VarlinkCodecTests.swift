import CordonProtocol
import Foundation
import Testing

@Suite("VarlinkCodec: call headers")
struct VarlinkCodecHeaderTests {
    let codec = VarlinkCodec()

    /// The `InvalidMessage` reason `text` is refused with, or nil when it decodes.
    private func refusal(_ text: String) throws -> String? {
        do {
            _ = try codec.decodeHeader(json(text))
            return nil
        } catch {
            #expect(error.name == "io.cordon.Agent.InvalidMessage")
            return try #require(error.parameters["reason"]?.stringValue)
        }
    }

    @Test func plainCall() throws {
        let header = try codec.decodeHeader(json(#"{"method":"io.cordon.Agent.GetStatus"}"#))
        #expect(header == VarlinkCallHeader(method: "io.cordon.Agent.GetStatus"))
        #expect(!header.more)
        #expect(!header.oneway)
        #expect(!header.upgrade)
        #expect(header.interface == "io.cordon.Agent")
        #expect(header.member == "GetStatus")
    }

    @Test func flagsAreRead() throws {
        let more = try codec.decodeHeader(
            json(#"{"method":"io.cordon.App.Subscribe","parameters":{"token":"t"},"more":true}"#))
        #expect(more == VarlinkCallHeader(method: "io.cordon.App.Subscribe", more: true))
        let oneway = try codec.decodeHeader(json(#"{"oneway":true,"method":"io.cordon.App.ReportActivity"}"#))
        #expect(oneway.oneway)
        #expect(!oneway.more)
        let upgrade = try codec.decodeHeader(json(#"{"method":"a.B","upgrade":true,"more":false}"#))
        #expect(upgrade == VarlinkCallHeader(method: "a.B", upgrade: true))
    }

    @Test func unknownMembersAreIgnored() throws {
        let header = try codec.decodeHeader(json(#"{"method":"a.B","future":{"x":[1,2]},"more":true}"#))
        #expect(header == VarlinkCallHeader(method: "a.B", more: true))
    }

    @Test func explicitNullFlagsMeanFalse() throws {
        let header = try codec.decodeHeader(json(#"{"method":"a.B","more":null,"oneway":null}"#))
        #expect(header == VarlinkCallHeader(method: "a.B"))
    }

    @Test func missingMethodIsAnInvalidMessage() throws {
        #expect(try refusal(#"{"parameters":{}}"#) == #"the call has no "method" member"#)
        #expect(try refusal("{}") == #"the call has no "method" member"#)
    }

    @Test(arguments: ["not json", "", "{", #"{"method":"a.B""#, "\u{0}", "{'method':'a.B'}"])
    func nonJSONIsAnInvalidMessage(text: String) throws {
        // The parser's reason and byte offset follow the prefix.
        #expect(try refusal(text)?.hasPrefix("the message is not a JSON object (") == true)
    }

    @Test(arguments: [
        (#"{"method":5}"#, "/method"), (#"{"method":"a.B","more":"yes"}"#, "/more"),
        (#"{"method":"a.B","oneway":1}"#, "/oneway"),
    ])
    func wrongTypesNameTheMember(text: String, path: String) throws {
        #expect(try refusal(text) == "the call envelope is malformed at \(path)")
    }

    @Test(arguments: ["[]", #"["method"]"#, "42", #""io.cordon.Agent.GetStatus""#, "null", "true"])
    func nonObjectsAreInvalidMessages(text: String) throws {
        #expect(try refusal(text) != nil)
    }

    @Test func interfaceAndMemberSplitAtTheLastDot() {
        #expect(VarlinkCallHeader(method: "org.varlink.service.GetInfo").interface == "org.varlink.service")
        #expect(VarlinkCallHeader(method: "org.varlink.service.GetInfo").member == "GetInfo")
        #expect(VarlinkCallHeader(method: "NoDot").interface == "")
        #expect(VarlinkCallHeader(method: "NoDot").member == "NoDot")
        #expect(VarlinkCallHeader(method: "trailing.").member == "")
    }

    @Test func encodedCallsDecodeBack() throws {
        let call = VarlinkCall(
            method: "io.cordon.App.Subscribe", parameters: SubscribeParameters(token: "abc"), more: true)
        let data = try codec.encode(call)
        #expect(try codec.decodeHeader(data) == VarlinkCallHeader(method: "io.cordon.App.Subscribe", more: true))
        #expect(try codec.decodeParameters(SubscribeParameters.self, from: data).token == "abc")
    }

    @Test func encodedCallsOmitFalseFlags() throws {
        let data = try codec.encode(
            VarlinkCall(method: "io.cordon.Agent.Unlock", parameters: UnlockParameters(passcode: "1234")))
        #expect(
            try parse(data)
                == .object([
                    "method": .string("io.cordon.Agent.Unlock"), "parameters": .object(["passcode": .string("1234")]),
                ]))
        let oneway = try codec.encode(VarlinkCall<NoParameters>(method: "a.B", parameters: nil, oneway: true))
        #expect(try parse(oneway) == .object(["method": .string("a.B"), "oneway": .bool(true)]))
    }

    @Test func encodingDoesNotEscapeSlashes() throws {
        let data = try codec.encode(["path": "/run/user/1000/cordon/agent.sock"])
        #expect(String(decoding: data, as: UTF8.self) == #"{"path":"/run/user/1000/cordon/agent.sock"}"#)
    }

    @Test func encodedRepliesCarryContinues() throws {
        let reply = VarlinkReply(parameters: GetKeyReply(key: "a2V5"), continues: true)
        #expect(
            try parse(codec.encode(reply))
                == .object(["parameters": .object(["key": .string("a2V5")]), "continues": .bool(true)]))
        let last = VarlinkReply(parameters: NoParameters())
        #expect(try parse(codec.encode(last)) == .object(["parameters": .object([:])]))
    }
}

@Suite("VarlinkCodec: errors")
struct VarlinkCodecErrorTests {
    let codec = VarlinkCodec()

    @Test func encodeErrorProducesNameAndParameters() throws {
        let data = codec.encodeError(CordonError.wrongPasscode(attemptsLeft: 3, retryAfterSeconds: 1.5).varlinkError)
        #expect(
            try parse(data)
                == .object([
                    "error": .string("io.cordon.Agent.WrongPasscode"),
                    "parameters": .object(["attemptsLeft": .int(3), "retryAfterSeconds": .double(1.5)]),
                ]))
    }

    @Test func errorsWithoutParametersStillSendAnObject() throws {
        let data = codec.encodeError(.permissionDenied)
        #expect(
            try parse(data)
                == .object(["error": .string("org.varlink.service.PermissionDenied"), "parameters": .object([:])]))
        #expect(!data.contains(0), "framing adds the NUL, not the codec")
    }

    @Test func encodedErrorsDecodeAsReplies() throws {
        let error = VarlinkError.invalidParameter("passcode")
        let reply = try JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: codec.encodeError(error))
        #expect(reply.error == "org.varlink.service.InvalidParameter")
        #expect(reply.parameters == ["parameter": .string("passcode")])
        #expect(reply.continues == nil)
    }

    @Test func errorStringsAreEscaped() throws {
        let error = VarlinkError.invalidMessage(reason: "quote \" backslash \\ newline \n")
        let reply = try JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: codec.encodeError(error))
        #expect(reply.parameters?["reason"] == .string("quote \" backslash \\ newline \n"))
    }
}
