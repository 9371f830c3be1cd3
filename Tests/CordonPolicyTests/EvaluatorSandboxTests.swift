import CordonPolicy
import Testing

@Suite("Evaluator: sandboxed apps and user namespaces")
struct EvaluatorSandboxTests {
    typealias F = MergeFixtures

    static let binding = PolicyDocument(
        PolicyKeys.Apps.managed([
            ManagedApp(id: "org.example.Notes", executables: ["/app/bin/notes"], flatpak: "org.example.Notes"),
            ManagedApp(id: "com.example.tool", executables: ["/usr/bin/tool"]),
        ]))

    func register(_ facts: RegistrationFacts) -> RegistrationDecision {
        F.evaluator((Self.binding, F.admin)).register(facts)
    }

    @Test func aVerifiedFlatpakOfTheBoundIdRegistersManaged() {
        let facts = RegistrationFacts(
            appId: "org.example.Notes", executable: "/app/bin/notes", inUserMadeNamespace: true,
            sandbox: .flatpak(appId: "org.example.Notes"))
        #expect(register(facts).outcome == .managed)
    }

    @Test func aFlatpakBindingNeedsTheVerifiedSandboxOfThatApp() {
        let cases: [(SandboxFact?, String)] = [
            (nil, "it does not run in a Flatpak sandbox and the binding names one"),
            (
                .flatpak(appId: "org.example.Other"),
                #"it is the Flatpak app "org.example.Other", not ["org.example.Notes"]"#
            ),
            (.unverified("its executable is not /x"), "its Flatpak sandbox does not verify: its executable is not /x"),
        ]
        for (sandbox, why) in cases {
            let decision = register(
                RegistrationFacts(appId: "org.example.Notes", executable: "/app/bin/notes", sandbox: sandbox))
            #expect(decision.outcome == .unmanaged)
            #expect(decision.reason.hasSuffix(why), "\(decision.reason)")
        }
        // The right sandbox with another program in it.
        let other = register(
            RegistrationFacts(
                appId: "org.example.Notes", executable: "/app/bin/shell", sandbox: .flatpak(appId: "org.example.Notes"))
        )
        #expect(other.outcome == .unmanaged)
    }

    @Test func aHostBindingDoesNotMatchInAUserMadeNamespace() {
        let inside = register(
            RegistrationFacts(appId: "com.example.tool", executable: "/usr/bin/tool", inUserMadeNamespace: true))
        #expect(inside.outcome == .unmanaged)
        #expect(inside.reason.contains("it runs in a user namespace its user made"))
        let outside = register(RegistrationFacts(appId: "com.example.tool", executable: "/usr/bin/tool"))
        #expect(outside.outcome == .managed)
    }

    @Test func twoBindingsOfOneIdNamingDifferentFlatpaksAllowNone() {
        let other = PolicyDocument(
            PolicyKeys.Apps.managed([
                ManagedApp(id: "org.example.Notes", executables: ["/app/bin/notes"], flatpak: "org.example.Fork")
            ]))
        let evaluator = F.evaluator((Self.binding, F.admin), (other, F.team))
        let facts = RegistrationFacts(
            appId: "org.example.Notes", executable: "/app/bin/notes", sandbox: .flatpak(appId: "org.example.Notes"))
        #expect(evaluator.register(facts).outcome == .unmanaged)
    }

    @Test func theParserReadsAndChecksTheFlatpakId() throws {
        let good = try PolicyParser.parse(
            #"{"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "a.b", "executables": ["/app/bin/b"], "flatpak": "a.b"}]}}"#,
            source: F.admin
        ).get()
        #expect(good[PolicyKeys.Apps.managed]?.first?.flatpak == "a.b")
        let bad = PolicyParser.parse(
            #"{"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "a.b", "executables": ["/x"], "flatpak": "not an id"}]}}"#,
            source: F.admin)
        guard case .failure(let failure) = bad else {
            Issue.record("a Flatpak id that is not an app id was accepted")
            return
        }
        #expect("\(failure)".contains("/apps/managed/0/flatpak"), "\(failure)")
    }
}
