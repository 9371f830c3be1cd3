import CordonPolicy
import Testing

@Suite("Evaluator: pasteboard")
struct EvaluatorPasteboardTests {
    typealias F = MergeFixtures

    enum Source: String, CaseIterable, Sendable {
        case none, unmanaged, managed
        var facts: AppFacts? {
            switch self {
            case .none: return nil
            case .unmanaged: return F.browser
            case .managed: return F.mail
            }
        }
    }

    /// Intune's levels: which cross-app pastes each allows.
    static func expected(_ level: PasteboardLevel, appManaged: Bool, source: Source) -> Bool {
        switch level {
        case .any: return true
        case .managedWithPasteIn: return appManaged
        case .managed: return appManaged && source == .managed
        case .blocked: return false
        }
    }

    @Test(arguments: PasteboardLevel.allCases, [true, false])
    func crossAppPastesFollowTheLevel(level: PasteboardLevel, appManaged: Bool) {
        let evaluator = F.evaluator((F.pasteboard(level), F.admin))
        for source in Source.allCases {
            let app = F.app("com.example.editor", managed: appManaged)
            let decision = evaluator.decide(F.paste(into: app, from: source.facts, length: 10))
            #expect(
                decision.allowed == Self.expected(level, appManaged: appManaged, source: source),
                "\(level) app managed: \(appManaged), source: \(source)")
            #expect(decision.action == .pasteboardPaste)
            #expect(decision.rules.contains(F.rule(F.admin, "/pasteboard/copyOut")) || level == .any)
            #expect(decision.obligations.isEmpty)
            #expect(decision.reason.hasPrefix("pasteboard.copyOut is \"\(level.rawValue)\""))
        }
    }

    @Test(arguments: PasteboardLevel.allCases, [true, false])
    func pastingWithinTheSameAppIsAlwaysAllowedUntruncated(level: PasteboardLevel, managed: Bool) {
        let evaluator = F.evaluator((F.pasteboard(level, maxChars: 5), F.admin))
        let app = F.app("com.example.editor", managed: managed)
        let decision = evaluator.decide(F.paste(into: app, from: app, length: 50))
        #expect(decision.allowed)
        #expect(decision.obligations.isEmpty)
        #expect(decision.reason.hasSuffix("pasting within the same app is always allowed"))
    }

    @Test func denialsNameTheSettingValueAndTheCulprit() {
        let evaluator = F.evaluator((F.pasteboard(.managed), F.admin))
        let fromBrowser = evaluator.decide(F.paste(into: F.notes, from: F.browser))
        #expect(fromBrowser.reason == #"pasteboard.copyOut is "managed" and the source is unmanaged"#)
        #expect(fromBrowser.rules == [F.rule(F.admin, "/pasteboard/copyOut")])
        let intoGame = evaluator.decide(F.paste(into: F.game, from: F.notes))
        #expect(intoGame.reason == #"pasteboard.copyOut is "managed" and the pasting app is unmanaged"#)
        let blocked = F.evaluator((F.pasteboard(.blocked), F.admin)).decide(F.paste(into: F.mail, from: F.notes))
        #expect(blocked.reason == #"pasteboard.copyOut is "blocked" and the paste crosses apps"#)
        let pasteIn = F.evaluator((F.pasteboard(.managedWithPasteIn), F.admin))
        #expect(pasteIn.decide(F.paste(into: F.notes, from: nil)).allowed)
        #expect(
            pasteIn.decide(F.paste(into: F.game, from: F.notes)).reason
                == #"pasteboard.copyOut is "managedWithPasteIn" and the pasting app is unmanaged"#)
    }

    @Test func allowedCrossAppPastesLongerThanMaxCharsAreTruncated() {
        let evaluator = F.evaluator((F.pasteboard(.any, maxChars: 100), F.admin))
        let long = evaluator.decide(F.paste(into: F.notes, from: F.browser, length: 101))
        #expect(long.allowed)
        #expect(long.obligations == [.truncate(maxChars: 100)])
        #expect(long.truncationLimit == 100)
        #expect(long.rules.contains(F.rule(F.admin, "/pasteboard/maxChars")))
        #expect(long.reason.contains("pasteboard.maxChars is 100"))
        #expect(evaluator.decide(F.paste(into: F.notes, from: F.browser, length: 100)).obligations.isEmpty)
        #expect(evaluator.decide(F.paste(into: F.notes, from: F.browser)).obligations.isEmpty, "no length")
    }

    @Test(arguments: PasteboardLevel.allCases)
    func copyingIsAlwaysAllowedAndTruncatedBeyondMaxChars(level: PasteboardLevel) {
        let evaluator = F.evaluator((F.pasteboard(level, maxChars: 20), F.admin))
        for app in [F.notes, F.game] {
            let short = evaluator.decide(DecisionRequest(action: .pasteboardCopy, app: app, peer: F.mail, length: 20))
            #expect(short.allowed)
            #expect(short.obligations.isEmpty)
            let long = evaluator.decide(DecisionRequest(action: .pasteboardCopy, app: app, length: 21))
            #expect(long.allowed)
            #expect(long.obligations == [.truncate(maxChars: 20)])
            #expect(long.action == .pasteboardCopy)
        }
    }

    @Test func theDefaultMaxCharsComesFromTheDefaultDocument() {
        let decision = F.evaluator().decide(F.paste(into: F.notes, from: F.mail, length: 20_000_000))
        #expect(decision.obligations == [.truncate(maxChars: 10_000_000)])
        #expect(decision.rules.contains(F.rule(F.builtin, "/pasteboard/maxChars")))
    }

    @Test func aSourceOverrideRestrictsWhereItsContentGoes() {
        let document = PolicyDocument(overrides: [
            PolicyOverride(apps: [F.mail.id], PolicyKeys.Pasteboard.copyOut(.blocked))
        ])
        let evaluator = F.evaluator((document, F.admin))
        let decision = evaluator.decide(F.paste(into: F.notes, from: F.mail))
        #expect(!decision.allowed)
        #expect(decision.rules == [F.rule(F.admin, "/overrides/0/pasteboard/copyOut")])
        #expect(evaluator.decide(F.paste(into: F.mail, from: F.notes)).allowed == false, "the pasting app's too")
        #expect(evaluator.decide(F.paste(into: F.notes, from: F.browser)).allowed)
        #expect(evaluator.decide(F.paste(into: F.mail, from: F.mail)).allowed)
    }

    @Test func whenBothAppsHaveOverridesTheTighterTruncationWins() {
        let document = PolicyDocument(overrides: [
            PolicyOverride(apps: [F.mail.id], PolicyKeys.Pasteboard.maxChars(300)),
            PolicyOverride(apps: [F.notes.id], PolicyKeys.Pasteboard.maxChars(200)),
        ])
        let evaluator = F.evaluator((document, F.admin))
        let intoNotes = evaluator.decide(F.paste(into: F.notes, from: F.mail, length: 1000))
        let intoMail = evaluator.decide(F.paste(into: F.mail, from: F.notes, length: 1000))
        #expect(intoNotes.obligations == [.truncate(maxChars: 200)])
        #expect(intoMail.obligations == [.truncate(maxChars: 200)])
        #expect(intoMail.rules.contains(F.rule(F.admin, "/overrides/0/pasteboard/maxChars")))
        #expect(intoMail.rules.contains(F.rule(F.admin, "/overrides/1/pasteboard/maxChars")))
        let managedOnly = PolicyDocument(overrides: [
            PolicyOverride(apps: [F.browser.id], PolicyKeys.Pasteboard.copyOut(.managed))
        ])
        let both = F.evaluator((document, F.admin), (managedOnly, F.team))
        #expect(!both.decide(F.paste(into: F.notes, from: F.browser)).allowed)
    }
}
