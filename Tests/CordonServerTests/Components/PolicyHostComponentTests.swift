import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `PolicyHostComponent` against a fake host: documents validated and explained, and the files of
/// a temporary admin directory loaded by `Reload`, where a rejected file never replaces the last
/// good version of it (docs/ARCHITECTURE.md, "A policy file, from disk to a decision").
@Suite struct PolicyHostComponentTests {
    typealias Fixture = ComponentFixture<PolicyHostComponent>

    static let blockSaves = #"{"schema": "cordon.policy.v1", "documents": {"saveCopies": "block"}}"#

    /// A component reading `tree`'s `admin`, `user` and `trust` directories.
    static func with(_ tree: TemporaryTree, _ body: (Fixture) async throws -> Void) async throws {
        try tree.directory("admin")
        try tree.directory("user")
        try tree.directory("trust")
        try await Fixture.with(
            configure: { host in
                host.configuration.policyDirectories = PolicyDirectories(
                    admin: tree.root + "/admin", user: tree.root + "/user", trust: tree.root + "/trust")
            }, make: { PolicyHostComponent(host: $0) }, body)
    }

    static func reload(_ fixture: Fixture) async throws -> PolicyStatus {
        let reply = try await fixture.call(.reloadPolicy) { try $0.serve(.reload, $1) }
        return try #require(reply["parameters"]).decoded(as: PolicyStatusReply.self).status
    }

    /// `documents.saveCopies` for an app under the policy the component has in force.
    static func saveCopies(_ fixture: Fixture) async throws -> SaveCopies {
        try await fixture.run { _, policy, _ in
            policy.evaluator.policy.forApp("com.example.notes")[PolicyKeys.Documents.saveCopies].value
        }
    }

    @Test func validateReportsEveryProblemWithItsPointer() async throws {
        try await Self.with(TemporaryTree()) { fixture in
            let good = try await fixture.call(.validatePolicy, ["document": .string(Self.blockSaves)]) {
                try $0.serve(.validate, $1)
            }
            #expect(good["parameters"]?["valid"] == .bool(true))
            #expect(good["parameters"]?["problems"] == .array([]))
            let typo = #"{"schema": "cordon.policy.v1", "documents": {"saveCopiez": "block"}}"#
            let bad = try await fixture.call(.validatePolicy, ["document": .string(typo), "path": .string("a.json")]) {
                try $0.serve(.validate, $1)
            }
            let reply = try #require(bad["parameters"]).decoded(as: ValidateReply.self)
            #expect(!reply.valid)
            #expect(reply.problems.map(\.pointer) == ["/documents/saveCopiez"])
            #expect(reply.problems.first?.path == "a.json")
            #expect(reply.problems.first?.line == 1)
            // Validating applies nothing.
            #expect(try await Self.saveCopies(fixture) == .allow)
        }
    }

    @Test func explainNamesTheRuleThatDecided() async throws {
        let tree = try TemporaryTree()
        try tree.write("admin/10-saves.json", Self.blockSaves)
        try await Self.with(tree) { fixture in
            _ = try await Self.reload(fixture)
            let reply = try await fixture.call(
                .explainPolicy,
                ["appId": .string("com.example.notes"), "action": .string("document.save"), "target": .string("/x")]
            ) { try $0.serve(.explain, $1) }
            let explained = try #require(reply["parameters"]).decoded(as: ExplainReply.self)
            #expect(!explained.decision.allowed)
            let rule = tree.root + "/admin/10-saves.json#/documents/saveCopies"
            #expect(explained.decision.rules == [rule])
            let step = explained.steps.first { $0.setting == "documents.saveCopies" }
            #expect(step?.value == #""block""#)
            #expect(step?.candidates.contains { $0.rule == rule && $0.won } == true)

            let unknown = try await fixture.call(
                .explainPolicy, ["appId": .string("com.example.notes"), "action": .string("document.shred")]
            ) { try $0.serve(.explain, $1) }
            #expect(unknown["error"] == .string("io.cordon.App.UnknownAction"))
        }
    }

    @Test func aRejectedFileNeverReplacesItsLastGoodVersion() async throws {
        let tree = try TemporaryTree()
        try await Self.with(tree) { fixture in
            let builtin = try await Self.reload(fixture).version
            #expect(try await Self.saveCopies(fixture) == .allow)

            try tree.write("admin/10-saves.json", Self.blockSaves)
            let applied = try await Self.reload(fixture)
            #expect(applied.version != builtin)
            let path = tree.root + "/admin/10-saves.json"
            #expect(applied.sources.first { $0.path == path }?.status == .applied)
            #expect(try await Self.saveCopies(fixture) == .block)
            let (inputs, audit, appliedCount) = try await fixture.run { host, _, _ in
                (host.inputs, host.audit.map { [$0.action, $0.outcome] as [String?] }, host.policyAppliedCount)
            }
            #expect(inputs == [.policyChanged(version: applied.version, now: 1_000_000)])
            #expect(audit == [["policy.apply", "applied"]])
            #expect(appliedCount == 1)

            // The file breaks: its last good version stays in force, and the rejection is audited.
            try tree.write("admin/10-saves.json", #"{"schema": "cordon.policy.v1", "documents": {"saveCopies": "#)
            let rejected = try await Self.reload(fixture)
            #expect(rejected.version == applied.version)
            let source = rejected.sources.first { $0.path == path }
            #expect(source?.status == .rejectedLastGoodInForce)
            #expect(source?.problems.isEmpty == false)
            #expect(try await Self.saveCopies(fixture) == .block)
            let (moreInputs, rejection) = try await fixture.run { host, _, _ in
                (host.inputs.count, host.audit.last.map { [$0.action, $0.outcome, $0.rules.first] as [String?] })
            }
            #expect(moreInputs == 1)
            #expect(rejection == ["policy.load", "rejected", path])

            // A new file that never parsed is not applied at all.
            try tree.write("admin/20-loose.json", #"{"schema": "cordon.policy.v1", "documents": {"saveCopies": 3}}"#)
            let second = try await Self.reload(fixture)
            #expect(second.sources.first { $0.path == tree.root + "/admin/20-loose.json" }?.status == .rejected)
            #expect(second.version == applied.version)
        }
    }
}
