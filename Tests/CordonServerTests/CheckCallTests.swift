import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `CheckCall` reads a `Check` call's parameters without building the context dictionary; it must
/// read every call exactly as `CheckParameters` does, and refuse what `CheckParameters` refuses.
struct CheckCallTests {
    @Test(arguments: [
        #"{"action":"pasteboard.paste"}"#,
        #"{"action":"pasteboard.paste","target":"com.example.mail","context":{"length":"120"}}"#,
        #"{"action":"pasteboard.paste","target":null,"context":null}"#,
        #"{"context":{"contentType":"text/plain","length":"7","other":"x"},"action":"document.open"}"#,
        #"{"action":"a","context":{}}"#,
        #"{"action":"a","context":{"length":"not a number"},"unknown":[1,2]}"#,
        #"{"action":"a","target":"b","extra":{"context":{"length":"1"}}}"#,
    ])
    func readsACallAsCheckParametersReadsIt(parameters: String) throws {
        let node = try parsed(parameters)
        let decoded = try VarlinkCodec().decodeParameters(CheckParameters.self, fromMember: node)
        #expect(CheckCall(readingJSON: node) == CheckCall(decoded))
    }

    @Test(arguments: [
        #"{}"#, #"{"action":1}"#, #"{"action":null}"#, #"{"action":"a","target":2}"#,
        #"{"action":"a","context":[]}"#, #"{"action":"a","context":{"k":1}}"#,
        #"{"action":"a","context":{"length":120}}"#, #"[]"#,
    ])
    func refusesWhatCheckParametersRefuses(parameters: String) throws {
        let node = try parsed(parameters)
        #expect(CheckCall(readingJSON: node) == nil)
        #expect(throws: VarlinkError.self) {
            try VarlinkCodec().decodeParameters(CheckParameters.self, fromMember: node)
        }
    }

    private func parsed(_ parameters: String) throws -> JSONNode {
        let text = #"{"method":"io.cordon.App.Check","parameters":\#(parameters)}"#
        return try #require(try VarlinkCodec().decodeCall(Array(text.utf8)).parameters)
    }
}
