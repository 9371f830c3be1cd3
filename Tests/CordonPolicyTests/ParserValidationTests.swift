import Testing

@testable import CordonPolicy

@Suite("Policy parser: validation rules")
struct ParserValidationTests {
    typealias Support = ParserTestSupport

    @Test func aMinimalDocumentHasOnlyTheSchema() {
        #expect(Support.valid(Support.document("")) == PolicyDocument())
    }

    @Test func everyKeyLandsInTheModel() {
        let text = """
            {"schema": "cordon.policy.v1",
             "apps": {"managed": [{"id": "com.example.notes", "executables": ["/usr/bin/notes"],
                                   "sha256": ["\(String(repeating: "ab", count: 32))"]},
                                  {"id": "org.example.mail-2", "executables": ["/opt/mail", "/usr/bin/mail"]}],
                      "unknown": "refuse"},
             "passcode": {"minLength": 6, "kind": "alphanumeric", "allowSimple": false, "maxAttempts": 5,
                          "onMaxAttempts": "lockout"},
             "lock": {"idleTimeoutSeconds": 120, "onScreenLock": true, "onSuspend": false, "reauthGraceSeconds": 0,
                      "discardKeyOnLock": true, "ackDeadlineMs": 1500, "onAckTimeout": "terminate"},
             "pasteboard": {"copyOut": "managedWithPasteIn", "maxChars": 500, "clearOnLock": true},
             "documents": {"sendTo": "managed", "receiveFrom": "none", "allowedTargets": ["com.example.mail"],
                           "allowedSources": [], "saveCopies": "block", "saveLocations": ["/srv/**"],
                           "blockedTypes": ["application/pdf", "image/*", ".exe"]},
             "storage": {"dataAccess": "whenUnlocked"},
             "conditions": {"debuggerAttached": "wipe", "preloadInjected": "block", "executableMismatch": "warn"},
             "overrides": [{"apps": ["com.example.notes"], "lock": {"ackDeadlineMs": 100},
                            "pasteboard": {"copyOut": "blocked"}, "documents": {"sendTo": "none"},
                            "storage": {"dataAccess": "whenUnlocked"}, "conditions": {"preloadInjected": "wipe"}}]}
            """
        let expected = PolicyDocument(
            PolicyKeys.Apps.managed([
                ManagedApp(
                    id: "com.example.notes", executables: ["/usr/bin/notes"],
                    sha256: [String(repeating: "ab", count: 32)]),
                ManagedApp(id: "org.example.mail-2", executables: ["/opt/mail", "/usr/bin/mail"]),
            ]), PolicyKeys.Apps.unknown(.refuse),
            PolicyKeys.Passcode.minLength(6), PolicyKeys.Passcode.kind(.alphanumeric),
            PolicyKeys.Passcode.allowSimple(false), PolicyKeys.Passcode.maxAttempts(5),
            PolicyKeys.Passcode.onMaxAttempts(.lockout),
            PolicyKeys.Lock.idleTimeoutSeconds(120), PolicyKeys.Lock.onScreenLock(true),
            PolicyKeys.Lock.onSuspend(false), PolicyKeys.Lock.reauthGraceSeconds(0),
            PolicyKeys.Lock.discardKeyOnLock(true), PolicyKeys.Lock.ackDeadlineMs(1500),
            PolicyKeys.Lock.onAckTimeout(.terminate),
            PolicyKeys.Pasteboard.copyOut(.managedWithPasteIn), PolicyKeys.Pasteboard.maxChars(500),
            PolicyKeys.Pasteboard.clearOnLock(true),
            PolicyKeys.Documents.sendTo(.managed), PolicyKeys.Documents.receiveFrom(ShareScope.none),
            PolicyKeys.Documents.allowedTargets(["com.example.mail"]), PolicyKeys.Documents.allowedSources([]),
            PolicyKeys.Documents.saveCopies(.block), PolicyKeys.Documents.saveLocations(["/srv/**"]),
            PolicyKeys.Documents.blockedTypes(["application/pdf", "image/*", ".exe"]),
            PolicyKeys.Storage.dataAccess(.whenUnlocked),
            PolicyKeys.Conditions.debuggerAttached(.wipe), PolicyKeys.Conditions.preloadInjected(.block),
            PolicyKeys.Conditions.executableMismatch(.warn),
            overrides: [
                PolicyOverride(
                    apps: ["com.example.notes"], PolicyKeys.Lock.ackDeadlineMs(100),
                    PolicyKeys.Pasteboard.copyOut(.blocked),
                    PolicyKeys.Documents.sendTo(ShareScope.none),
                    PolicyKeys.Storage.dataAccess(.whenUnlocked),
                    PolicyKeys.Conditions.preloadInjected(.wipe))
            ])
        #expect(Support.valid(text) == expected)
    }

    @Test func theSchemaIsRequiredAndExact() {
        #expect(Support.messages("{}") == [#"missing required key "schema"; expected "schema": "cordon.policy.v1""#])
        #expect(
            Support.messages(#"{"schema": "cordon.policy.v2"}"#) == [
                #"expected "cordon.policy.v1", got "cordon.policy.v2""#
            ])
        #expect(Support.messages(#"{"schema": 1}"#) == [#"expected "cordon.policy.v1", got 1"#])
        #expect(Support.messages("[]") == ["expected an object, got an empty array"])
        #expect(Support.messages("\"cordon.policy.v1\"") == [#"expected an object, got "cordon.policy.v1""#])
    }

    @Test func diagnosticsCarryTheFilePointerAndPosition() throws {
        let diagnostics = Support.diagnostics(
            "{\"schema\": \"cordon.policy.v1\",\n  \"lock\": {\"idleTimeoutSeconds\": -5}}")
        let diagnostic = try #require(diagnostics.first)
        #expect(diagnostics.count == 1)
        #expect(diagnostic.path == "test.json")
        #expect(diagnostic.pointer == "/lock/idleTimeoutSeconds")
        #expect(diagnostic.line == 2 && diagnostic.column == 34)
        #expect(diagnostic.message == "expected an integer from 0 to 86400, got -5")
        #expect(
            diagnostic.description
                == "test.json:2:34: /lock/idleTimeoutSeconds: expected an integer from 0 to 86400, got -5")
    }

    @Test func syntaxErrorsBecomeOneDiagnostic() {
        let diagnostics = Support.diagnostics("{\"schema\": \"cordon.policy.v1\",\n  \"lock\": {\"onSuspend\": tru}}")
        #expect(
            diagnostics.map(\.description) == [
                "test.json:2:25: /lock/onSuspend: expected a value, got 'tru'; the literals are true, false and null (lower case, unquoted)"
            ])
    }

    static let ranges: [(section: String, key: String, range: ClosedRange<Int>)] = [
        ("passcode", "minLength", 4...64), ("passcode", "maxAttempts", 1...100),
        ("lock", "idleTimeoutSeconds", 0...86_400),
        ("lock", "reauthGraceSeconds", 0...86_400), ("lock", "ackDeadlineMs", 100...600_000),
        ("pasteboard", "maxChars", 1...10_000_000),
    ]

    @Test func integersMustBeWithinTheirRange() {
        for (section, key, range) in Self.ranges {
            let expected = "expected an integer from \(range.lowerBound) to \(range.upperBound)"
            func messages(_ value: String) -> [String] {
                Support.messages(Support.document(#""\#(section)": {"\#(key)": \#(value)}"#))
            }
            #expect(messages(String(range.lowerBound)).isEmpty, "\(key)")
            #expect(messages(String(range.upperBound)).isEmpty, "\(key)")
            #expect(messages(String(range.lowerBound - 1)) == ["\(expected), got \(range.lowerBound - 1)"])
            #expect(messages(String(range.upperBound + 1)) == ["\(expected), got \(range.upperBound + 1)"])
            #expect(messages("-1") == ["\(expected), got -1"])
            #expect(messages("1.5") == ["\(expected), got 1.5"])
            #expect(messages("\"\(range.lowerBound)\"") == ["\(expected), got \"\(range.lowerBound)\""])
            #expect(messages("null") == ["\(expected), got null"])
            #expect(messages("1e100") == ["\(expected), got 1e100"])
        }
    }

    @Test func integralNumbersInOtherNotationsAreIntegers() {
        let document = Support.valid(Support.document(#""lock": {"idleTimeoutSeconds": 3e2, "ackDeadlineMs": 2000.0}"#))
        #expect(document?[PolicyKeys.Lock.idleTimeoutSeconds] == 300)
        #expect(document?[PolicyKeys.Lock.ackDeadlineMs] == 2000)
    }

    @Test func booleansMustBeBooleans() {
        let keys = [
            ("passcode", "allowSimple"), ("lock", "onScreenLock"), ("lock", "onSuspend"), ("lock", "discardKeyOnLock"),
            ("pasteboard", "clearOnLock"),
        ]
        for (section, key) in keys {
            #expect(Support.messages(Support.document(#""\#(section)": {"\#(key)": false}"#)).isEmpty)
            #expect(
                Support.messages(Support.document(#""\#(section)": {"\#(key)": "true"}"#)) == [
                    #"expected true or false, got "true""#
                ])
            #expect(
                Support.messages(Support.document(#""\#(section)": {"\#(key)": 0}"#)) == [
                    "expected true or false, got 0"
                ])
        }
    }

    static let enums: [(section: String, key: String, spellings: [String])] = [
        ("apps", "unknown", ["trusted", "unmanaged", "refuse"]), ("passcode", "kind", ["numeric", "alphanumeric"]),
        ("passcode", "onMaxAttempts", ["lockout", "wipe"]),
        ("lock", "onAckTimeout", ["freeze", "terminate", "disconnect", "report"]),
        ("pasteboard", "copyOut", ["blocked", "managed", "managedWithPasteIn", "any"]),
        ("documents", "sendTo", ["none", "managed", "any"]), ("documents", "receiveFrom", ["none", "managed", "any"]),
        ("documents", "saveCopies", ["block", "allow"]),
        ("storage", "dataAccess", ["whenUnlocked", "afterFirstUnlock"]),
        ("conditions", "debuggerAttached", ["warn", "block", "wipe"]),
        ("conditions", "preloadInjected", ["warn", "block", "wipe"]),
        ("conditions", "executableMismatch", ["warn", "block", "wipe"]),
    ]

    @Test func enumsTakeExactlyTheModelsSpellings() {
        for (section, key, spellings) in Self.enums {
            func messages(_ value: String) -> [String] {
                Support.messages(Support.document(#""\#(section)": {"\#(key)": \#(value)}"#))
            }
            let expected = "expected one of " + spellings.map { "\"\($0)\"" }.joined(separator: ", ")
            for spelling in spellings { #expect(messages("\"\(spelling)\"").isEmpty, "\(key): \(spelling)") }
            #expect(messages(#""bogus""#) == [#"\#(expected), got "bogus""#])
            #expect(messages("1") == ["\(expected), got 1"])
            #expect(
                messages(#""\#(spellings[0].uppercased())""#).first?.hasSuffix(#"did you mean "\#(spellings[0])"?"#)
                    == true)
        }
    }

    @Test func theMessageOfTheBriefIsExact() {
        let messages = Support.messages(Support.document(#""pasteboard": {"copyOut": "manged"}"#))
        #expect(
            messages == [
                #"expected one of "blocked", "managed", "managedWithPasteIn", "any", got "manged"; did you mean "managed"?"#
            ])
    }
}
