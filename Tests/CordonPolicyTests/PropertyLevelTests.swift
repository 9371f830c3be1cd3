import CordonPolicy
import PropertyBased
import Testing

/// Exhaustive small-world checks: every pair of levels, every request shape.
@Suite("Properties: stricter levels never allow more")
struct PropertyLevelTests {
    typealias F = MergeFixtures

    /// Every pasting app / source / same-app / length combination.
    static let pasteRequests: [DecisionRequest] = {
        var requests: [DecisionRequest] = []
        let apps = [F.app("x.one", managed: true), F.app("x.one", managed: false)]
        let sources: [AppFacts?] = [
            nil, F.app("x.two", managed: true), F.app("x.two", managed: false), F.app("x.one", managed: true),
            F.app("x.one", managed: false),
        ]
        for app in apps {
            for source in sources {
                for length in [nil, 5, 5000] { requests.append(F.paste(into: app, from: source, length: length)) }
            }
        }
        return requests
    }()

    static let shareRequests: [DecisionRequest] = {
        let peers: [AppFacts?] = [nil, F.app("x.two", managed: true), F.app("x.two", managed: false)]
        return peers.flatMap { peer in
            [F.send(from: F.app("x.one"), to: peer), F.receive(by: F.app("x.one"), from: peer)]
        }
    }()

    @Test func aStricterPasteboardLevelOrLimitNeverAllowsMore() {
        for looser in PasteboardLevel.allCases {
            for stricter in PasteboardLevel.allCases where stricter.strictness >= looser.strictness {
                let before = F.evaluator((F.pasteboard(looser, maxChars: 1000), F.admin))
                let after = F.evaluator(
                    (F.pasteboard(looser, maxChars: 1000), F.admin), (F.pasteboard(stricter, maxChars: 100), F.user))
                #expect(after.policy.base[PolicyKeys.Pasteboard.copyOut].value == stricter)
                for request in Self.pasteRequests {
                    let old = before.decide(request)
                    let new = after.decide(request)
                    if !old.allowed { #expect(!new.allowed, "\(looser) → \(stricter): \(request)") }
                    if let limit = old.truncationLimit, new.allowed {
                        #expect((new.truncationLimit ?? .max) <= limit)
                    }
                }
            }
        }
    }

    @Test func aStricterShareScopeNeverAllowsMore() {
        for looser in ShareScope.allCases {
            for stricter in ShareScope.allCases where stricter.strictness >= looser.strictness {
                let loose = [PolicyKeys.Documents.sendTo(looser), PolicyKeys.Documents.receiveFrom(looser)]
                let strict = [PolicyKeys.Documents.sendTo(stricter), PolicyKeys.Documents.receiveFrom(stricter)]
                let before = F.evaluator((F.documents(loose), F.admin))
                let after = F.evaluator((F.documents(loose), F.admin), (F.documents(strict), F.user))
                for request in Self.shareRequests where !before.decide(request).allowed {
                    #expect(!after.decide(request).allowed, "\(looser) → \(stricter): \(request)")
                }
            }
        }
    }

    @Test func aStricterConditionNeverRegistersMoreLeniently() {
        let binding = PolicyDocument(PolicyKeys.Apps.managed([ManagedApp(id: "x.one", executables: ["/x"])]))
        let facts = [
            RegistrationFacts(appId: "x.one", executable: "/x"), RegistrationFacts(appId: "x.one", executable: "/y"),
            RegistrationFacts(appId: "x.one", executable: "/x", debuggerAttached: true, preloadInjected: true),
            RegistrationFacts(appId: "x.one", executable: "/y", debuggerAttached: true),
        ]
        for looser in ConditionAction.allCases {
            for stricter in ConditionAction.allCases where stricter.strictness >= looser.strictness {
                let all = { (action: ConditionAction) in
                    PolicyDocument(
                        PolicyKeys.Conditions.debuggerAttached(action), PolicyKeys.Conditions.preloadInjected(action),
                        PolicyKeys.Conditions.executableMismatch(action))
                }
                let before = F.evaluator((binding, F.admin), (all(looser), F.admin))
                let after = F.evaluator((binding, F.admin), (all(looser), F.admin), (all(stricter), F.user))
                for registration in facts {
                    let old = PropertyMergeTests.severity(before.register(registration))
                    let new = PropertyMergeTests.severity(after.register(registration))
                    #expect(new >= old, "\(looser) → \(stricter): \(registration)")
                }
            }
        }
    }
}
