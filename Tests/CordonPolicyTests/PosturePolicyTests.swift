import CordonPolicy
import CordonProtocol
import Testing

/// The posture keys of `conditions` (docs/ARCHITECTURE.md, "Posture"): parsed with pointers,
/// merged strictest-first, and what a reading means for an app.
@Suite("Policy: posture conditions")
struct PosturePolicyTests {
    typealias Support = ParserTestSupport
    typealias F = MergeFixtures

    @Test(arguments: PostureCheck.allCases)
    func badActionsAreRefusedWithTheirPointer(check: PostureCheck) throws {
        let text = Support.document(#""conditions": {"\#(check.rawValue)": "deny"}"#)
        let diagnostics = Support.diagnostics(text)
        let diagnostic = try #require(diagnostics.first)
        #expect(diagnostics.count == 1)
        #expect(diagnostic.pointer == "/conditions/\(check.rawValue)")
        #expect(diagnostic.message.contains("\"ignore\", \"warn\", \"block\""), "\(diagnostic.message)")
        // A boolean is not an action either, in the base or an override.
        let override = Support.document(
            #""overrides": [{"apps": ["com.example.a"], "conditions": {"\#(check.rawValue)": true}}]"#)
        #expect(Support.diagnostics(override).map(\.pointer) == ["/overrides/0/conditions/\(check.rawValue)"])
    }

    @Test func postureUnknownTakesPassOrFail() throws {
        let diagnostic = try #require(
            Support.diagnostics(Support.document(#""conditions": {"postureUnknown": "maybe"}"#)).first)
        #expect(diagnostic.pointer == "/conditions/postureUnknown")
        let document = try #require(Support.valid(Support.document(#""conditions": {"postureUnknown": "pass"}"#)))
        #expect(document[PolicyKeys.Conditions.postureUnknown] == .pass)
    }

    @Test func theBuiltinDefaultIgnoresEveryCheckAndCountsUnknownAsFail() {
        let policy = EffectivePolicy(document: BuiltinPolicy.document, source: BuiltinPolicy.source)
        for check in PostureCheck.allCases {
            #expect(policy[PolicyKeys.Conditions.setting(for: check)].value == .ignore)
        }
        #expect(policy[PolicyKeys.Conditions.postureUnknown].value == .fail)
        let evaluator = PolicyEvaluator(policy)
        let failing = PostureCheck.allCases.map { PostureResult($0, .fail, "e") }
        #expect(evaluator.posture(appId: "com.example.a", checks: failing).action == .ignore)
    }

    @Test func theStrictestActionWinsAcrossFiles() {
        let evaluator = F.evaluator(
            (PolicyDocument(PolicyKeys.Conditions.secureBoot(.warn)), F.admin),
            (PolicyDocument(PolicyKeys.Conditions.secureBoot(.block)), F.team))
        let verdict = evaluator.posture(appId: "com.example.a", checks: [PostureResult(.secureBoot, .fail, "off")])
        #expect(verdict.action == .block)
        #expect(verdict.deciding?.rules == [F.rule(F.team, "/conditions/secureBoot")])
        #expect(verdict.deciding?.reason == #"conditions.secureBoot is "block" and off"#)
    }

    @Test func unknownCountsAsThePolicySays() {
        let checks = [
            PostureResult(.kernelLockdown, .unknown, "no securityfs"), PostureResult(.secureBoot, .pass, "on"),
        ]
        let failing = F.evaluator(
            (
                PolicyDocument(PolicyKeys.Conditions.kernelLockdown(.wipe), PolicyKeys.Conditions.secureBoot(.block)),
                F.admin
            ))
        let verdict = failing.posture(appId: "com.example.a", checks: checks)
        #expect(verdict.action == .wipe)
        #expect(verdict.findings.map(\.result.check) == [.kernelLockdown])
        #expect(verdict.deciding?.reason.hasSuffix("(unknown counts as fail)") == true)
        // Without the built-in default (whose `fail` would win the merge): the file's `pass` decides.
        let passing = PolicyEvaluator(documents: [
            (
                PolicyDocument(
                    PolicyKeys.Conditions.kernelLockdown(.wipe), PolicyKeys.Conditions.postureUnknown(.pass)), F.admin
            )
        ])
        #expect(passing.posture(appId: "com.example.a", checks: checks).findings.isEmpty)
    }

    @Test func minimumVersionsKeepTheHighestPerNameAndRefuseBadEntries() throws {
        let evaluator = F.evaluator(
            (PolicyDocument(PolicyKeys.Conditions.minimumVersions(["kernel 6.1", "debian 11"])), F.admin),
            (PolicyDocument(PolicyKeys.Conditions.minimumVersions(["kernel 6.10", "fedora 40"])), F.team))
        let merged = evaluator.policy[PolicyKeys.Conditions.minimumVersions].value
        #expect(merged == ["kernel 6.10", "debian 11", "fedora 40"])
        #expect(MinimumVersions.table(merged) == ["kernel": "6.10", "debian": "11", "fedora": "40"])
        let bad = Support.diagnostics(Support.document(#""conditions": {"minimumVersions": ["kernel", "Debian 12"]}"#))
        #expect(bad.map(\.pointer) == ["/conditions/minimumVersions/0", "/conditions/minimumVersions/1"])
        // Device-wide: refused in an override.
        let override = Support.diagnostics(
            Support.document(
                #""overrides": [{"apps": ["com.example.a"], "conditions": {"minimumVersions": ["kernel 6.1"]}}]"#))
        #expect(override.map(\.pointer) == ["/overrides/0/conditions/minimumVersions"])
    }

    @Test func anOverrideTightensOneApp() throws {
        let text = Support.document(
            #""conditions": {"screenLock": "warn"}, "overrides": [{"apps": ["com.example.vault"], "conditions": {"screenLock": "block"}}]"#
        )
        let document = try #require(Support.valid(text))
        let evaluator = PolicyEvaluator(EffectivePolicy(document: document, source: F.admin))
        let checks = [PostureResult(.screenLock, .fail, "lock-enabled: false")]
        #expect(evaluator.posture(appId: "com.example.vault", checks: checks).action == .block)
        #expect(evaluator.posture(appId: "com.example.notes", checks: checks).action == .warn)
        #expect(evaluator.posture(appId: "com.example.notes", checks: checks).warnings.count == 1)
    }
}
