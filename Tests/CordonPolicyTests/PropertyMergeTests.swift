import CordonPolicy
import PropertyBased
import Testing

@Suite("Properties: merging is a join and adding a policy never loosens")
struct PropertyMergeTests {
    typealias G = PropertyGenerators

    static func policy(_ entry: (PolicyDocument, PolicySource)) -> EffectivePolicy {
        EffectivePolicy(document: entry.0, source: entry.1)
    }

    @Test func mergeIsCommutative() async {
        await propertyCheck(input: G.document, G.document) { first, second in
            let forward = EffectivePolicy.merge([first, second])
            let backward = EffectivePolicy.merge([second, first])
            #expect(forward == backward)
            #expect(forward.versionHash == backward.versionHash)
            #expect(forward.describeEffective() == backward.describeEffective())
        }
    }

    @Test func mergeIsAssociative() async {
        await propertyCheck(input: G.document, G.document, G.document) { first, second, third in
            let (a, b, c) = (Self.policy(first), Self.policy(second), Self.policy(third))
            let left = a.merged(with: b).merged(with: c)
            let right = a.merged(with: b.merged(with: c))
            #expect(left == right)
            #expect(left == EffectivePolicy.merge([first, second, third]))
            #expect(left.versionHash == right.versionHash)
        }
    }

    @Test func mergeIsIdempotentAndEmptyIsItsIdentity() async {
        await propertyCheck(input: G.document, G.document) { first, second in
            #expect(EffectivePolicy.merge([first, first]) == EffectivePolicy.merge([first]))
            let both = EffectivePolicy.merge([first, second])
            #expect(both.merged(with: both) == both)
            #expect(EffectivePolicy.empty.merged(with: both) == both)
            #expect(both.merged(with: .empty) == both)
        }
    }

    @Test func addingADocumentNeverTurnsADenialIntoAnAllowanceNorLoosensTruncation() async {
        await propertyCheck(count: 400, input: G.documents, G.document, G.requests) { documents, added, requests in
            let before = PolicyEvaluator(documents: documents)
            let after = PolicyEvaluator(documents: documents + [added])
            for request in requests {
                let old = before.decide(request)
                let new = after.decide(request)
                if !old.allowed { #expect(!new.allowed, "\(request) was denied: \(old.reason); now: \(new.reason)") }
                if new.allowed, let limit = old.truncationLimit {
                    #expect((new.truncationLimit ?? .max) <= limit, "\(request): truncation loosened")
                }
            }
        }
    }

    @Test func addingAUserDocumentNeverLoosensARegistration() async {
        await propertyCheck(input: G.documents, G.userDocument, G.registrations) { documents, added, registrations in
            let before = PolicyEvaluator(documents: documents)
            let after = PolicyEvaluator(documents: documents + [added])
            for facts in registrations {
                let old = before.register(facts)
                let new = after.register(facts)
                #expect(Self.severity(new) >= Self.severity(old), "\(facts): \(old.reason) → \(new.reason)")
                if old.wipe { #expect(new.wipe) }
            }
        }
    }

    @Test func everyDenialNamesItsRulesAndExplanationsAgreeWithDecisions() async {
        await propertyCheck(input: G.documents, G.requests) { documents, requests in
            let evaluator = PolicyEvaluator(documents: [(MergeFixtures.defaults, MergeFixtures.builtin)] + documents)
            for request in requests {
                let decision = evaluator.decide(request)
                #expect(!decision.reason.isEmpty)
                if !decision.allowed { #expect(!decision.rules.isEmpty, "\(request): \(decision.reason)") }
                let explanation = evaluator.explain(request)
                #expect(explanation.decision == decision)
                for step in explanation.steps {
                    #expect(Set(step.candidates.filter(\.won).map(\.rule)) == Set(step.rules), "\(step.setting)")
                }
            }
        }
    }

    @Test func overridesOnlyTightenTheirApps() async {
        await propertyCheck(input: G.documents, G.requests) { documents, requests in
            let stripped = documents.map { document, source in
                var document = document
                document.overrides = []
                return (document, source)
            }
            let withOverrides = PolicyEvaluator(documents: documents)
            let withoutOverrides = PolicyEvaluator(documents: stripped)
            for request in requests where !withoutOverrides.decide(request).allowed {
                #expect(!withOverrides.decide(request).allowed)
            }
        }
    }

    static func severity(_ decision: RegistrationDecision) -> Int {
        switch decision.outcome {
        case .managed: return 0
        case .unmanaged: return 1
        case .refused: return decision.wipe ? 3 : 2
        }
    }
}
