import CordonPolicy
import Testing

@Suite("Evaluator: registration")
struct EvaluatorRegistrationTests {
    typealias F = MergeFixtures

    static let digest = String(repeating: "ab", count: 32)
    static let binding = PolicyDocument(
        PolicyKeys.Apps.managed([
            ManagedApp(id: "com.example.notes", executables: ["/usr/bin/notes"]),
            ManagedApp(id: "com.example.mail", executables: ["/usr/bin/mail"], sha256: [digest]),
        ]))

    static func conditions(
        mismatch: ConditionAction? = nil, debugger: ConditionAction? = nil, preload: ConditionAction? = nil
    ) -> PolicyDocument {
        PolicyDocument(
            PolicyKeys.Conditions.debuggerAttached(ifSet: debugger),
            PolicyKeys.Conditions.preloadInjected(ifSet: preload),
            PolicyKeys.Conditions.executableMismatch(ifSet: mismatch))
    }

    @Test func aBoundExecutableRegistersManaged() {
        let evaluator = F.evaluator((Self.binding, F.admin))
        let decision = evaluator.register(RegistrationFacts(appId: "com.example.notes", executable: "/usr/bin/notes"))
        #expect(decision.outcome == .managed)
        #expect(!decision.wipe)
        #expect(decision.warnings.isEmpty)
        #expect(decision.rules == [F.rule(F.admin, "/apps/managed/0")])
        #expect(decision.reason == #"apps.managed binds "com.example.notes" and the client matches the binding"#)
    }

    @Test(arguments: UnknownAppAction.allCases)
    func theCompiledManagedCheckAgreesWithTheMergedPolicy(unknown: UnknownAppAction) {
        let document = PolicyDocument(
            PolicyKeys.Apps.managed([
                ManagedApp(id: "com.example.notes", executables: ["/usr/bin/notes"]),
                ManagedApp(id: "com.example.mail", executables: ["/usr/bin/mail"]),
            ]), PolicyKeys.Apps.unknown(unknown))
        let evaluator = F.evaluator((document, F.admin))
        let unknownTrusted = evaluator.policy[PolicyKeys.Apps.unknown].value == .trusted
        for appId in ["com.example.notes", "com.example.mail", "com.example.other", ""] {
            let merged = evaluator.policy.managedApps[appId] != nil || unknownTrusted
            #expect(evaluator.compiled.isManaged(appId) == merged)
        }
        #expect(evaluator.compiled.isManaged("com.example.notes"))
        // The built-in default is stricter than `trusted`, so merged with it `trusted` never wins:
        // the document alone shows the other side.
        let alone = CompiledPolicy(EffectivePolicy(document: document, source: F.admin))
        #expect(alone.isManaged("com.example.notes"))
        #expect(alone.isManaged("com.example.other") == (unknown == .trusted))
    }

    @Test func digestsMustMatchWhenTheBindingListsThem() {
        let evaluator = F.evaluator((Self.binding, F.admin), (Self.conditions(mismatch: .block), F.team))
        let good = RegistrationFacts(
            appId: "com.example.mail", executable: "/usr/bin/mail", sha256: Self.digest.uppercased())
        #expect(evaluator.register(good).outcome == .managed)
        let bad = RegistrationFacts(appId: "com.example.mail", executable: "/usr/bin/mail", sha256: "00")
        #expect(evaluator.register(bad).outcome == .refused)
        let unknown = RegistrationFacts(appId: "com.example.mail", executable: "/usr/bin/mail")
        let refused = evaluator.register(unknown)
        #expect(refused.outcome == .refused)
        #expect(refused.reason.contains("SHA-256 is unknown"))
    }

    @Test(arguments: [
        (ConditionAction.warn, RegistrationDecision.Outcome.unmanaged, false),
        (.block, .refused, false),
        (.wipe, .refused, true),
    ])
    func anExecutableMismatchTriggersItsCondition(
        action: ConditionAction, outcome: RegistrationDecision.Outcome, wipe: Bool
    ) {
        let evaluator = F.evaluator((Self.binding, F.admin), (Self.conditions(mismatch: action), F.team))
        let decision = evaluator.register(RegistrationFacts(appId: "com.example.notes", executable: "/tmp/notes"))
        #expect(decision.outcome == outcome)
        #expect(decision.wipe == wipe)
        #expect(decision.warnings == (action == .warn ? ["executableMismatch"] : []))
        #expect(decision.reason.hasPrefix("conditions.executableMismatch is \"\(action.rawValue)\" and the client"))
        #expect(decision.rules.contains(F.rule(F.admin, "/apps/managed/0")))
        #expect(decision.rules.contains(F.rule(F.team, "/conditions/executableMismatch")))
    }

    @Test func unboundIdsGetAppsUnknown() {
        let unmanaged = F.evaluator((Self.binding, F.admin))
        let facts = RegistrationFacts(appId: "org.example.game", executable: "/usr/games/game")
        let decision = unmanaged.register(facts)
        #expect(decision.outcome == .unmanaged)
        #expect(decision.reason == #"apps.unknown is "unmanaged" and "org.example.game" is not bound in apps.managed"#)
        #expect(decision.rules == [F.rule(F.builtin, "/apps/unknown")])
        let refusing = F.evaluator(
            (Self.binding, F.admin), (PolicyDocument(PolicyKeys.Apps.unknown(.refuse)), F.user))
        let refused = refusing.register(facts)
        #expect(refused.outcome == .refused)
        #expect(refused.rules == [F.rule(F.user, "/apps/unknown")])
    }

    @Test(arguments: [ConditionAction.warn, .block, .wipe])
    func debuggerAndPreloadConditions(action: ConditionAction) {
        let evaluator = F.evaluator(
            (Self.binding, F.admin), (Self.conditions(debugger: action, preload: action), F.team))
        let base = RegistrationFacts(appId: "com.example.notes", executable: "/usr/bin/notes")
        var debugged = base
        debugged.debuggerAttached = true
        var preloaded = base
        preloaded.preloadInjected = true
        for (facts, name) in [(debugged, "debuggerAttached"), (preloaded, "preloadInjected")] {
            let decision = evaluator.register(facts)
            #expect(decision.outcome == (action == .warn ? .managed : .refused))
            #expect(decision.wipe == (action == .wipe))
            #expect(decision.warnings == (action == .warn ? [name] : []))
            #expect(decision.rules.contains(F.rule(F.team, "/conditions/\(name)")))
            if action != .warn { #expect(decision.reason.hasPrefix("conditions.\(name) is \"\(action.rawValue)\"")) }
        }
        #expect(evaluator.register(base).warnings.isEmpty)
    }

    @Test func theMostSevereCheckDecidesAndEveryWarningIsKept() {
        let evaluator = F.evaluator(
            (Self.binding, F.admin), (Self.conditions(mismatch: .warn, debugger: .warn, preload: .wipe), F.team))
        var facts = RegistrationFacts(appId: "com.example.notes", executable: "/tmp/x", debuggerAttached: true)
        let warned = evaluator.register(facts)
        #expect(warned.outcome == .unmanaged)
        #expect(warned.warnings == ["executableMismatch", "debuggerAttached"])
        facts.preloadInjected = true
        let wiped = evaluator.register(facts)
        #expect(wiped.outcome == .refused)
        #expect(wiped.wipe)
        #expect(wiped.reason.hasPrefix(#"conditions.preloadInjected is "wipe""#))
    }

    @Test func overridesTightenConditionsPerApp() {
        let document = PolicyDocument(overrides: [
            PolicyOverride(apps: ["com.example.notes"], PolicyKeys.Conditions.debuggerAttached(.block))
        ])
        let evaluator = F.evaluator((Self.binding, F.admin), (document, F.team))
        let notes = RegistrationFacts(appId: "com.example.notes", executable: "/usr/bin/notes", debuggerAttached: true)
        #expect(evaluator.register(notes).outcome == .refused)
        let mail = RegistrationFacts(
            appId: "com.example.mail", executable: "/usr/bin/mail", sha256: Self.digest, debuggerAttached: true)
        #expect(evaluator.register(mail).outcome == .managed)
    }

    @Test func decideAnswersAppRegisterWithTheLocationAsExecutable() {
        let evaluator = F.evaluator((Self.binding, F.admin), (Self.conditions(mismatch: .block), F.team))
        let app = F.app("com.example.notes")
        let good = evaluator.decide(DecisionRequest(action: .appRegister, app: app, location: "/usr/bin/notes"))
        #expect(good.allowed)
        #expect(good.action == .appRegister)
        #expect(!evaluator.decide(DecisionRequest(action: .appRegister, app: app, location: "/tmp/notes")).allowed)
    }
}
