import Testing

@testable import CordonPolicy

@Suite("Policy parser: unknown keys and did-you-mean")
struct ParserSuggestionTests {
    typealias Support = ParserTestSupport
    typealias Suggestions = PolicyParser.Suggestions

    @Test func theMessageOfTheBriefIsExact() {
        let diagnostics = Support.diagnostics(Support.document(#""pasteboard": {"copyOutt": "managed"}"#))
        #expect(diagnostics.map(\.message) == [#"unknown key "copyOutt" in "pasteboard"; did you mean "copyOut"?"#])
        #expect(diagnostics.first?.pointer == "/pasteboard/copyOutt")
        #expect(diagnostics.first?.column == 47)
    }

    @Test(arguments: [
        ("pastebord", "pasteboard"), ("Lock", "lock"), ("overides", "overrides"), ("condtions", "conditions"),
        ("shcema", "schema"), ("documets", "documents"), ("pascode", "passcode"), ("storag", "storage"),
    ])
    func suggestsTopLevelSections(_ typed: String, _ meant: String) {
        let messages = Support.messages(#"{"schema": "cordon.policy.v1", "\#(typed)": {}}"#)
        #expect(messages == [#"unknown key "\#(typed)" at the top level; did you mean "\#(meant)"?"#])
    }

    @Test(arguments: [
        ("lock", "idleTimeout", "idleTimeoutSeconds"), ("lock", "reauthGrace", "reauthGraceSeconds"),
        ("lock", "onscreenlock", "onScreenLock"), ("lock", "ackDeadline", "ackDeadlineMs"),
        ("passcode", "maxAttempt", "maxAttempts"), ("passcode", "minLenght", "minLength"),
        ("documents", "allowedTarget", "allowedTargets"), ("documents", "blockedType", "blockedTypes"),
        ("documents", "sendto", "sendTo"), ("storage", "dataAcess", "dataAccess"),
        ("conditions", "debuggerAttatched", "debuggerAttached"), ("apps", "manged", "managed"),
    ])
    func suggestsKeysWithinASection(_ section: String, _ typed: String, _ meant: String) {
        let messages = Support.messages(Support.document(#""\#(section)": {"\#(typed)": null}"#))
        #expect(messages == [#"unknown key "\#(typed)" in "\#(section)"; did you mean "\#(meant)"?"#])
    }

    @Test func namesTheSectionAKeyBelongsIn() {
        #expect(
            Support.messages(Support.document(#""copyOut": "any""#)) == [
                #"unknown key "copyOut" at the top level; it belongs in the "pasteboard" section"#
            ])
        #expect(
            Support.messages(Support.document(#""lock": {"clearOnLock": true}"#)) == [
                #"unknown key "clearOnLock" in "lock"; it belongs in the "pasteboard" section"#
            ])
    }

    @Test func listsTheKeysWhenNothingIsClose() {
        #expect(
            Support.messages(Support.document(#""storage": {"encryption": "aes"}"#)) == [
                #"unknown key "encryption" in "storage"; expected one of "dataAccess", "wipeOnAckTimeout""#
            ])
        #expect(
            Support.messages(
                Support.document(#""apps": {"managed": [{"id": "a.b", "executables": ["/x"], "path": "/x"}]}"#)) == [
                    #"unknown key "path" in "apps.managed[0]"; expected one of "id", "executables", "sha256", "flatpak""#
                ])
    }

    @Test func reportsEveryUnknownKeyAtItsKey() {
        let text = "{\"schema\": \"cordon.policy.v1\",\n \"a\": 1,\n \"lock\": {\"b\": 2, \"c\": 3}}"
        let diagnostics = Support.diagnostics(text)
        #expect(diagnostics.map(\.pointer) == ["/a", "/lock/b", "/lock/c"])
        #expect(diagnostics.map { [$0.line ?? 0, $0.column ?? 0] } == [[2, 2], [3, 11], [3, 19]])
    }

    @Test func escapesOddKeysInMessagesAndPointers() {
        let diagnostics = Support.diagnostics(Support.document(#""a/b~\"\n": 1"#))
        #expect(diagnostics.first?.message.hasPrefix(#"unknown key "a/b~\"\n" at the top level"#) == true)
        #expect(diagnostics.first?.pointer == "/a~1b~0\"\n")
    }

    @Test(arguments: [
        ("", "", 0), ("abc", "", 3), ("", "abc", 3), ("kitten", "sitting", 3), ("copyOut", "copyOutt", 1),
        ("ab", "ba", 1), ("abcd", "acbd", 1), ("flaw", "lawn", 2), ("same", "same", 0),
    ])
    func editDistanceCountsTranspositionsOnce(_ lhs: String, _ rhs: String, _ distance: Int) {
        #expect(Suggestions.editDistance(Array(lhs), Array(rhs)) == distance)
        #expect(Suggestions.editDistance(Array(rhs), Array(lhs)) == distance)
    }

    @Test func closestPrefersTheSmallestDistance() {
        #expect(Suggestions.closest(to: "maneged", in: ["managed", "managedWithPasteIn"]) == "managed")
        #expect(Suggestions.closest(to: "x", in: ["apps", "lock"]) == nil)
        #expect(Suggestions.closest(to: "", in: ["apps"]) == nil)
        #expect(Suggestions.closest(to: String(repeating: "a", count: 100), in: ["apps"]) == nil)
        #expect(Suggestions.closest(to: "SCHEMA", in: ["schema"]) == "schema")
    }
}
