import Testing

@testable import CordonPolicy

@Suite("Policy parser: app ids, paths, digests, globs, types, overrides, origins")
struct ParserStringRulesTests {
    typealias Support = ParserTestSupport

    static let appIdMessage =
        "expected a reverse-DNS app id such as \"com.example.notes\" (letters, digits, '_' and '-' in dot-separated labels)"

    @Test(arguments: ["com.example.notes", "a.b", "io.cordon.App_2", "org.x-y.z", "A1.B2.C3", "123.456"])
    func acceptsReverseDNSAppIds(_ id: String) {
        #expect(PolicyParser.Rules.isAppId(id))
        #expect(Support.messages(Support.document(#""documents": {"allowedTargets": ["\#(id)"]}"#)).isEmpty)
    }

    @Test(arguments: [
        "notes", "", ".com.example", "com.example.", "com..example", "com/example", "com.exa mple", "com.exämple",
        "com.*",
    ])
    func rejectsOtherAppIds(_ id: String) {
        #expect(!PolicyParser.Rules.isAppId(id))
        for key in ["allowedTargets", "allowedSources"] {
            let messages = Support.messages(Support.document(#""documents": {"\#(key)": ["\#(id)"]}"#))
            #expect(messages == ["\(Self.appIdMessage), got \(PositionedJSON.quoted(id))"])
        }
        let managed = Support.messages(
            Support.document(#""apps": {"managed": [{"id": "\#(id)", "executables": ["/x"]}]}"#))
        #expect(managed == ["\(Self.appIdMessage), got \(PositionedJSON.quoted(id))"])
        let override = Support.messages(Support.document(#""overrides": [{"apps": ["\#(id)"]}]"#))
        #expect(override == ["\(Self.appIdMessage), got \(PositionedJSON.quoted(id))"])
    }

    @Test func executablesAreNonEmptyListsOfAbsolutePaths() {
        func messages(_ executables: String) -> [String] {
            Support.messages(Support.document(#""apps": {"managed": [{"id": "a.b", "executables": \#(executables)}]}"#))
        }
        #expect(messages(#"["/usr/bin/x", "/opt/y z"]"#).isEmpty)
        #expect(messages(#"["bin/x"]"#) == [#"expected an absolute path (starting with '/'), got "bin/x""#])
        #expect(messages(#"["~/bin/x"]"#) == [#"expected an absolute path (starting with '/'), got "~/bin/x""#])
        #expect(messages(#"[""]"#) == [#"expected an absolute path (starting with '/'), got """#])
        #expect(messages("[]") == ["expected at least one executable, got an empty array"])
        #expect(messages(#""/usr/bin/x""#) == [#"expected an array of absolute paths, got "/usr/bin/x""#])
    }

    @Test func managedAppsNeedAnIdAndExecutables() {
        let messages = Support.messages(
            Support.document(#""apps": {"managed": [{}, {"id": "a.b"}, {"executables": ["/x"]}, 5]}"#))
        #expect(
            messages == [
                #"missing required key "id" in "apps.managed[0]""#,
                #"missing required key "executables" in "apps.managed[0]""#,
                #"missing required key "executables" in "apps.managed[1]""#,
                #"missing required key "id" in "apps.managed[2]""#,
                "expected an object, got 5",
            ])
        #expect(
            Support.messages(Support.document(#""apps": {"managed": {}}"#)) == [
                "expected an array of managed apps, got an object"
            ])
    }

    @Test func digestsAreSixtyFourLowerCaseHexDigits() {
        func messages(_ digest: String) -> [String] {
            Support.messages(
                Support.document(
                    #""apps": {"managed": [{"id": "a.b", "executables": ["/x"], "sha256": ["\#(digest)"]}]}"#))
        }
        let valid = "0123456789abcdef" + String(repeating: "0", count: 48)
        #expect(messages(valid).isEmpty)
        for bad in [valid.uppercased(), String(valid.dropLast()), valid + "0", String(valid.dropLast()) + "g", ""] {
            #expect(
                messages(bad) == [
                    "expected a SHA-256 digest (64 lower-case hexadecimal digits), got \(PositionedJSON.quoted(bad))"
                ])
        }
    }

    @Test func globsAreNonEmptyStrings() {
        func messages(_ globs: String) -> [String] {
            Support.messages(Support.document(#""documents": {"saveLocations": \#(globs)}"#))
        }
        #expect(messages(#"["/home/*/Documents/**", "relative/ok", "*"]"#).isEmpty)
        #expect(messages("[]").isEmpty)
        #expect(messages(#"[""]"#) == [#"expected a non-empty glob, got """#])
        #expect(messages("[1]") == ["expected a non-empty glob, got 1"])
    }

    @Test(arguments: [
        "application/pdf", "image/*", "text/plain", "application/vnd.ms-excel", "application/x-pkcs12", ".exe",
        ".tar.gz", ".c++",
    ])
    func acceptsMIMETypesAndExtensions(_ type: String) {
        #expect(PolicyParser.Rules.isBlockedType(type))
        #expect(Support.messages(Support.document(#""documents": {"blockedTypes": ["\#(type)"]}"#)).isEmpty)
    }

    @Test(arguments: [
        "exe", "", ".", "..exe", "*/*", "*", "image/", "/pdf", "application/pdf/x", "text/pl ain", "image/**", ".e xe",
    ])
    func rejectsOtherBlockedTypes(_ type: String) {
        #expect(!PolicyParser.Rules.isBlockedType(type))
        let messages = Support.messages(Support.document(#""documents": {"blockedTypes": ["\#(type)"]}"#))
        #expect(
            messages == [
                "expected a MIME type (\"application/pdf\", \"image/*\") or a file extension (\".exe\"), got \(PositionedJSON.quoted(type))"
            ])
    }

    @Test func overridesNeedAppsAndTakeOnlyPerAppSections() {
        let text = Support.document(
            #""overrides": [{"apps": []}, {}, {"apps": ["a.b"], "passcode": {}, "apps2": 1}, {"apps": ["a.b"], "lock": {"onSuspend": 1}}]"#
        )
        #expect(
            Support.messages(text) == [
                "expected at least one app id, got an empty array",
                #"missing required key "apps" in "overrides[1]""#,
                #""passcode" cannot be set per app in "overrides[2]"; passcode rules apply to the whole container"#,
                #"unknown key "apps2" in "overrides[2]"; did you mean "apps"?"#,
                "expected true or false, got 1",
            ])
        #expect(Support.messages(Support.document(#""overrides": [{"apps": ["a.b"]}]"#)).isEmpty)
        #expect(
            Support.messages(Support.document(#""overrides": {}"#)) == ["expected an array of overrides, got an object"]
        )
    }

    @Test func sectionsInOverridesAreNamedInMessages() {
        let text = Support.document(#""overrides": [{"apps": ["a.b"], "pasteboard": {"copyOutt": "any"}}]"#)
        #expect(
            Support.messages(text) == [#"unknown key "copyOutt" in "overrides[0].pasteboard"; did you mean "copyOut"?"#]
        )
        #expect(Support.diagnostics(text).first?.pointer == "/overrides/0/pasteboard/copyOutt")
    }

    @Test func usersCannotMakeAppsManaged() {
        let text = Support.document(
            #""apps": {"managed": [{"id": "a.b", "executables": ["/x"]}], "unknown": "refuse"}"#)
        let diagnostics = Support.diagnostics(text, origin: .user)
        #expect(
            diagnostics.map(\.message) == [
                #"a user policy cannot make apps managed; "apps.managed" belongs in an admin policy"#
            ])
        #expect(diagnostics.first?.pointer == "/apps/managed")
        #expect(Support.messages(text, origin: .admin).isEmpty)
        #expect(Support.messages(text, origin: .builtin).isEmpty)
        #expect(Support.messages(Support.document(#""apps": {"managed": []}"#), origin: .user).count == 1)
        #expect(Support.messages(Support.document(#""apps": {"unknown": "refuse"}"#), origin: .user).isEmpty)
    }

    @Test func everyProblemOfAFileIsReportedInDocumentOrder() {
        let text = """
            {
              "overrides": [{"apps": ["x"]}],
              "lock": {"idleTimeoutSeconds": -1, "onSuspend": "no"},
              "pastebord": {},
              "passcode": {"kind": "digits"}
            }
            """
        let diagnostics = Support.diagnostics(text)
        #expect(
            diagnostics.map(\.pointer) == [
                "", "/overrides/0/apps/0", "/lock/idleTimeoutSeconds", "/lock/onSuspend", "/pastebord",
                "/passcode/kind",
            ])
        #expect(diagnostics.map { $0.line ?? 0 } == [1, 2, 3, 3, 4, 5])
        let failure = PolicyParseFailure(diagnostics: diagnostics)
        #expect(failure.description.split(separator: "\n").count == 6)
    }

    @Test func validatesAnAlreadyParsedValue() throws {
        let json = try #require(Support.json(Support.document(#""storage": {"dataAccess": "whenUnlocked"}"#)))
        let result = PolicyParser.validate(json, source: PolicySource(path: "<inline>", origin: .admin))
        #expect((try? result.get())?[PolicyKeys.Storage.dataAccess] == .whenUnlocked)
    }

    @Test func diagnosticsWithoutPositionSortFirst() {
        let sorted = PolicyParser.inDocumentOrder([
            PolicyDiagnostic(path: "f", pointer: "/b", line: 2, column: 1, message: "b"),
            PolicyDiagnostic(path: "f", pointer: "", line: nil, column: nil, message: "none"),
            PolicyDiagnostic(path: "f", pointer: "/a", line: 1, column: 5, message: "a"),
            PolicyDiagnostic(path: "f", pointer: "/a2", line: 1, column: 5, message: "a2"),
        ])
        #expect(sorted.map(\.message) == ["none", "a", "a2", "b"])
    }
}
