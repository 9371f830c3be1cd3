import CordonProtocol
import Foundation
import Testing

@Suite("VarlinkCodec: call parameters")
struct VarlinkParametersTests {
    let codec = VarlinkCodec()

    /// The parameter an `InvalidParameter` error names when decoding `text` as `P` fails.
    private func invalidParameter<P: Decodable>(_ type: P.Type, _ text: String) throws -> String {
        let error = try #require(throws: VarlinkError.self) { try codec.decodeParameters(type, from: json(text)) }
        #expect(error.name == "org.varlink.service.InvalidParameter")
        return try #require(error.parameters["parameter"]?.stringValue)
    }

    @Test(arguments: [
        #"{"method":"io.cordon.Agent.GetStatus"}"#, #"{"method":"a.B","parameters":{}}"#,
        #"{"method":"a.B","parameters":null}"#, #"{"method":"a.B","parameters":{"ignored":1}}"#,
    ])
    func noParametersAcceptsAbsentNullOrAnyObject(text: String) throws {
        #expect(try codec.decodeParameters(NoParameters.self, from: json(text)) == NoParameters())
    }

    @Test func typedParametersDecode() throws {
        let unlock = try codec.decodeParameters(
            UnlockParameters.self, from: json(#"{"method":"io.cordon.Agent.Unlock","parameters":{"passcode":"1234"}}"#))
        #expect(unlock.passcode == "1234")
        let change = try codec.decodeParameters(
            ChangePasscodeParameters.self, from: json(#"{"method":"m.M","parameters":{"old":"1111","new":"2222"}}"#))
        #expect(change.old == "1111")
        #expect(change.new == "2222")
        let ack = try codec.decodeParameters(
            AcknowledgeParameters.self, from: json(#"{"method":"m.M","parameters":{"seq":12,"status":"halted"}}"#))
        #expect(ack.seq == 12)
        #expect(ack.status == .halted)
        let wipe = try codec.decodeParameters(WipeParameters.self, from: json(#"{"parameters":{"confirm":true}}"#))
        #expect(wipe.confirm)
    }

    @Test func optionalParametersMayBeAbsent() throws {
        #expect(try codec.decodeParameters(UnlockParameters.self, from: json(#"{"method":"m.M"}"#)).passcode == nil)
        #expect(
            try codec.decodeParameters(UnlockParameters.self, from: json(#"{"parameters":{"passcode":null}}"#))
                .passcode == nil)
        #expect(try codec.decodeParameters(SubscribeParameters.self, from: json(#"{"parameters":{}}"#)).token == nil)
    }

    @Test func missingRequiredParameterIsNamed() throws {
        #expect(try invalidParameter(InitializeParameters.self, #"{"method":"m.M"}"#) == "passcode")
        #expect(try invalidParameter(InitializeParameters.self, #"{"method":"m.M","parameters":{}}"#) == "passcode")
        #expect(try invalidParameter(ChangePasscodeParameters.self, #"{"parameters":{"old":"1111"}}"#) == "new")
        #expect(try invalidParameter(RegisterParameters.self, #"{"parameters":{"appid":"x"}}"#) == "appId")
        #expect(try invalidParameter(AcknowledgeParameters.self, #"{"parameters":{"status":"halted"}}"#) == "seq")
    }

    @Test func wrongTypeNamesTheParameter() throws {
        #expect(try invalidParameter(InitializeParameters.self, #"{"parameters":{"passcode":1234}}"#) == "passcode")
        #expect(try invalidParameter(UnlockParameters.self, #"{"parameters":{"passcode":["1234"]}}"#) == "passcode")
        #expect(try invalidParameter(WipeParameters.self, #"{"parameters":{"confirm":"yes"}}"#) == "confirm")
        #expect(
            try invalidParameter(AcknowledgeParameters.self, #"{"parameters":{"seq":"1","status":"halted"}}"#) == "seq")
    }

    @Test func fractionalNumberForAnIntNamesTheParameter() throws {
        let name = try invalidParameter(AcknowledgeParameters.self, #"{"parameters":{"seq":1.5,"status":"halted"}}"#)
        #expect(name == "seq")
    }

    @Test func nullForARequiredParameterNamesIt() throws {
        #expect(try invalidParameter(InitializeParameters.self, #"{"parameters":{"passcode":null}}"#) == "passcode")
    }

    @Test func unknownEnumValueNamesTheParameter() throws {
        #expect(
            try invalidParameter(AcknowledgeParameters.self, #"{"parameters":{"seq":1,"status":"done"}}"#) == "status")
    }

    @Test func nestedProblemsNameTheTopLevelParameter() throws {
        let text = #"""
            {"parameters":{"apps":[{"appId":"a","pid":1,"executable":"/x","managed":true,"subscribed":false,
            "compliance":"sometimes"}]}}
            """#
        #expect(try invalidParameter(ListAppsReply.self, text) == "apps")
    }

    @Test(arguments: [#"{"parameters":5}"#, #"{"parameters":"passcode"}"#, #"{"parameters":[]}"#])
    func parametersThatAreNotAnObjectAreNamedParameters(text: String) throws {
        #expect(try invalidParameter(InitializeParameters.self, text) == "parameters")
    }

    @Test(arguments: ["", "garbage", "[1,2"])
    func nonJSONIsNamedParameters(text: String) throws {
        #expect(try invalidParameter(NoParameters.self, text) == "parameters")
    }

    @Test func unknownParametersAreIgnored() throws {
        let unlock = try codec.decodeParameters(
            UnlockParameters.self, from: json(#"{"parameters":{"passcode":"1234","biometric":true}}"#))
        #expect(unlock.passcode == "1234")
    }

    @Test func repliesDecodeLikeCalls() throws {
        let reply = #"{"parameters":{"appId":"com.example.notes","managed":true,"token":"t0k"},"continues":false}"#
        let decoded = try codec.decodeParameters(RegisterReply.self, from: json(reply))
        #expect(decoded.appId == "com.example.notes")
        #expect(decoded.managed)
        #expect(decoded.token == "t0k")
    }

    @Test func everyParameterTypeRoundTripsThroughACall() throws {
        func roundTrip<P: Codable & Sendable>(_ value: P) throws -> P {
            try codec.decodeParameters(P.self, from: codec.encode(VarlinkCall(method: "m.M", parameters: value)))
        }
        #expect(try roundTrip(InitializeParameters(passcode: "p")).passcode == "p")
        #expect(try roundTrip(UnlockParameters(passcode: nil)).passcode == nil)
        #expect(try roundTrip(ChangePasscodeParameters(old: "a", new: "b")).new == "b")
        #expect(try roundTrip(WipeParameters(confirm: false)).confirm == false)
        #expect(try roundTrip(RegisterParameters(appId: "com.example.x")).appId == "com.example.x")
        #expect(try roundTrip(SubscribeParameters(token: "t")).token == "t")
        #expect(try roundTrip(AcknowledgeParameters(seq: 9, status: .handled)).status == .handled)
        #expect(try roundTrip(InterfaceDescriptionParameters(interface: "io.cordon.App")).interface == "io.cordon.App")
    }
}
