import CordonPolicy
import Testing

@Suite("Explain and show")
struct ExplainTests {
    typealias F = MergeFixtures

    @Test func aPasteExplanationListsEveryDocumentsValueAndTheWinners() {
        let evaluator = F.evaluator((F.pasteboard(.managed, maxChars: 50), F.admin), (F.pasteboard(.managed), F.user))
        let explanation = evaluator.explain(F.paste(into: F.notes, from: F.browser))
        #expect(explanation.decision == evaluator.decide(F.paste(into: F.notes, from: F.browser)))
        #expect(explanation.apps == [F.notes.id])
        #expect(explanation.steps.map(\.setting) == ["pasteboard.copyOut", "pasteboard.maxChars"])
        let copyOut = explanation.step("pasteboard.copyOut")
        #expect(copyOut?.value == #""managed""#)
        #expect(
            copyOut?.candidates == [
                ExplanationCandidate(rule: F.rule(F.admin, "/pasteboard/copyOut"), value: #""managed""#, won: true),
                ExplanationCandidate(rule: F.rule(F.builtin, "/pasteboard/copyOut"), value: #""any""#, won: false),
                ExplanationCandidate(rule: F.rule(F.user, "/pasteboard/copyOut"), value: #""managed""#, won: true),
            ])
        #expect(copyOut?.rules == [F.rule(F.admin, "/pasteboard/copyOut"), F.rule(F.user, "/pasteboard/copyOut")])
        #expect(explanation.step("pasteboard.maxChars")?.value == "50")
    }

    @Test func aPasteFromAnOverriddenSourceExplainsBothApps() {
        let document = PolicyDocument(overrides: [
            PolicyOverride(apps: [F.mail.id], PolicyKeys.Pasteboard.copyOut(.blocked))
        ])
        let evaluator = F.evaluator((document, F.admin))
        let explanation = evaluator.explain(F.paste(into: F.notes, from: F.mail))
        #expect(!explanation.decision.allowed)
        #expect(explanation.apps == [F.notes.id, F.mail.id])
        let winners = explanation.step("pasteboard.copyOut")?.candidates.filter(\.won).map(\.rule)
        #expect(winners == [F.rule(F.admin, "/overrides/0/pasteboard/copyOut")])
    }

    @Test func documentExplanationsListTheirSettingsAndListsAllContribute() {
        let first = F.documents(PolicyKeys.Documents.sendTo(.managed), PolicyKeys.Documents.allowedTargets(["a", "b"]))
        let second = F.documents(
            PolicyKeys.Documents.allowedTargets(["b"]), PolicyKeys.Documents.blockedTypes([".exe"]))
        let evaluator = F.evaluator((first, F.admin), (second, F.team))
        let send = evaluator.explain(F.send(from: F.notes, to: F.mail))
        #expect(
            send.steps.map(\.setting) == ["documents.sendTo", "documents.allowedTargets", "documents.blockedTypes"])
        let targets = send.step("documents.allowedTargets")
        #expect(targets?.value == #"["b"]"#)
        #expect(targets?.candidates.map(\.value) == [#"["a", "b"]"#, #"["b"]"#])
        #expect(targets?.candidates.allSatisfy(\.won) == true)
        let receive = evaluator.explain(F.receive(by: F.notes, from: F.mail))
        #expect(receive.steps.map(\.setting).first == "documents.receiveFrom")
        #expect(receive.step("documents.allowedSources")?.candidates.isEmpty == true)
        #expect(receive.step("documents.allowedSources")?.value == "unrestricted")
        let save = evaluator.explain(F.save(to: "/a"))
        #expect(
            save.steps.map(\.setting) == ["documents.saveCopies", "documents.saveLocations", "documents.blockedTypes"])
    }

    @Test func aRegistrationExplanationShowsTheBindingUnknownAndConditions() {
        let binding = PolicyDocument(PolicyKeys.Apps.managed([ManagedApp(id: "n", executables: ["/n"])]))
        let evaluator = F.evaluator((binding, F.admin))
        let facts = RegistrationFacts(appId: "n", executable: "/other", debuggerAttached: true)
        let explanation = evaluator.explain(facts)
        #expect(explanation.registration == evaluator.register(facts))
        #expect(explanation.decision.allowed, "warn: registered unmanaged")
        #expect(
            explanation.steps.map(\.setting) == [
                "apps.managed.n", "apps.unknown", "conditions.executableMismatch", "conditions.debuggerAttached",
                "conditions.preloadInjected",
            ])
        #expect(explanation.step("apps.managed.n")?.value == #"{"executables": ["/n"]}"#)
        let viaDecide = evaluator.explain(DecisionRequest(action: .appRegister, app: F.app("n"), location: "/n"))
        #expect(viaDecide.registration?.outcome == .managed)
    }

    @Test func theExplanationPrintsAsAChain() {
        let evaluator = F.evaluator((F.pasteboard(.blocked), F.admin))
        let text = evaluator.explain(F.paste(into: F.notes, from: F.mail)).description
        #expect(
            text.hasPrefix(#"denied: pasteboard.paste — pasteboard.copyOut is "blocked" and the paste crosses apps"#))
        #expect(text.contains(#"* /etc/cordon/policy.d/10-base.json#/pasteboard/copyOut = "blocked""#))
        #expect(text.contains(#"  <builtin>#/pasteboard/copyOut = "any""#))
    }

    @Test func describeEffectiveListsEverySettingWithProvenance() {
        let overrides = PolicyDocument(
            PolicyKeys.Apps.managed([ManagedApp(id: "org/odd~id", executables: ["/x"])]),
            overrides: [PolicyOverride(apps: ["n"], PolicyKeys.Pasteboard.maxChars(7))])
        let evaluator = F.evaluator((overrides, F.admin))
        let shown = evaluator.describeEffective()
        let paths = shown.map(\.path)
        #expect(paths.count == Set(paths).count)
        #expect(paths.first == "/apps/unknown")
        #expect(paths.contains("/apps/managed/org~1odd~0id"))
        let perSection = { (section: String) in PolicyKeys.names.filter { $0.hasPrefix(section + ".") }.count }
        #expect(paths.filter { $0.hasPrefix("/passcode/") }.count == perSection("passcode"))
        #expect(
            paths.filter { !$0.hasPrefix("/apps") && !$0.hasPrefix("/passcode") && !$0.hasPrefix("/overrides") }.count
                == PolicyKeys.names.count - perSection("apps") - perSection("passcode"))
        let override = shown.first { $0.path == "/overrides/n/pasteboard/maxChars" }
        #expect(
            override
                == EffectiveSetting(
                    path: "/overrides/n/pasteboard/maxChars", value: "7", json: "7",
                    rules: [F.rule(F.admin, "/overrides/0/pasteboard/maxChars")]))
        #expect(paths.last == "/overrides/n/pasteboard/maxChars", "only the settings the override sets")
        let idle = shown.first { $0.path == "/lock/idleTimeoutSeconds" }
        #expect(idle?.value == "300")
        #expect(idle?.rules == [F.rule(F.builtin, "/lock/idleTimeoutSeconds")])
        #expect(shown.first { $0.path == "/documents/allowedTargets" }?.value == "unrestricted")
    }
}
