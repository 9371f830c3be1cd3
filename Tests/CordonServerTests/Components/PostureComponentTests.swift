import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `PostureComponent` against a fake host and a fixture tree standing in for `/`: `Get` reads the
/// checks from it, and the policy's `conditions` act on them — a `block` refuses a registration
/// and revokes a registered app's key, a `warn` admits and is audited (docs/ARCHITECTURE.md, "Posture").
@Suite struct PostureComponentTests {
    typealias Fixture = ComponentFixture<PostureComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)

    /// Secure Boot on, the kernel not locked down, untainted, ptrace unrestricted, Debian 12.
    static func tree() throws -> TemporaryTree {
        let tree = try TemporaryTree()
        try tree.write("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e00e98032b8c", [6, 0, 0, 0, 1])
        try tree.write("sys/kernel/security/lockdown", "[none] integrity confidentiality\n")
        try tree.write("proc/sys/kernel/tainted", "0\n")
        try tree.write("proc/sys/kernel/yama/ptrace_scope", "0\n")
        try tree.write("proc/sys/kernel/osrelease", "6.1.0-test\n")
        try tree.write("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n")
        return tree
    }

    static func with(
        _ tree: TemporaryTree, _ document: PolicyDocument, _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(document, admin)], configure: { $0.configuration.postureRoot = tree.root },
            make: { PostureComponent(host: $0) }
        ) { fixture in
            try await body(fixture)
            try await fixture.run { _, posture, _ in posture.shutdown() }
        }
    }

    static func get(_ fixture: Fixture) async throws -> [PostureResult] {
        let reply = try await fixture.call(.getPosture) { try $0.serve(.get, $1) }
        return try #require(reply["parameters"]).decoded(as: PostureReply.self).checks
    }

    @Test func getReadsTheChecksUnderTheRoot() async throws {
        let tree = try Self.tree()
        try await Self.with(tree, PolicyDocument()) { fixture in
            let checks = try await Self.get(fixture)
            let status = Dictionary(uniqueKeysWithValues: checks.map { ($0.check, $0.status) })
            #expect(status[.secureBoot] == .pass)
            #expect(status[.kernelLockdown] == .fail)
            #expect(status[.kernelTaint] == .pass)
            #expect(status[.ptraceScope] == .fail)
            #expect(status[.osVersion] == .pass)
            #expect(checks.first { $0.check == .kernelVersion }?.evidence.contains("6.1.0-test") == true)
            // Nobody registered: nothing to act on, nothing audited.
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
    }

    @Test func aBlockConditionRefusesTheRegistration() async throws {
        let tree = try Self.tree()
        let document = PolicyDocument(
            PolicyKeys.Conditions.kernelLockdown(.block), PolicyKeys.Conditions.ptraceScope(.warn))
        try await Self.with(tree, document) { fixture in
            let checks = try await Self.get(fixture)
            let refusal = try await fixture.run { _, posture, _ -> String? in
                do throws(CordonError) {
                    try posture.admit("com.example.notes", checks: checks)
                    return nil
                } catch {
                    return error.varlinkName
                }
            }
            #expect(refusal == "io.cordon.App.PostureRefused")
            let audit = try await fixture.run { host, _, _ in
                host.audit.map { [$0.appId, $0.action, $0.outcome, $0.rules.first] as [String?] }
            }
            #expect(
                audit == [
                    [
                        "com.example.notes", "posture.register", "refused",
                        "/etc/cordon/policy.d/test.json#/conditions/kernelLockdown",
                    ]
                ])
        }
    }

    @Test func aWipeConditionErasesTheAppsDataAndRefusesTheRegistration() async throws {
        let tree = try Self.tree()
        try await Self.with(tree, PolicyDocument(PolicyKeys.Conditions.ptraceScope(.wipe))) { fixture in
            let checks = try await Self.get(fixture)
            let refusal = try await fixture.run { _, posture, _ -> String? in
                do throws(CordonError) {
                    try posture.admit("com.example.notes", checks: checks)
                    return nil
                } catch {
                    return error.varlinkName
                }
            }
            #expect(refusal == "io.cordon.App.PostureRefused")
            let (wiped, audit) = try await fixture.run { host, _, _ in
                (host.wiped, host.audit.map { [$0.action, $0.outcome] as [String?] })
            }
            #expect(wiped == ["com.example.notes"])
            #expect(audit == [["posture.register", "refused"], ["posture.wipe", "wiped"]])
        }
    }

    @Test func aWarnConditionAdmitsAndIsAudited() async throws {
        let tree = try Self.tree()
        try await Self.with(tree, PolicyDocument(PolicyKeys.Conditions.ptraceScope(.warn))) { fixture in
            let checks = try await Self.get(fixture)
            try await fixture.run { _, posture, _ throws in try posture.admit("com.example.notes", checks: checks) }
            let audit = try await fixture.run { host, _, _ in host.audit.map { [$0.action, $0.outcome] as [String?] } }
            #expect(audit == [["posture.warn", "warned"]])
        }
    }

    @Test func aReadingThatBlocksARegisteredAppRevokesItsKeyUntilItPasses() async throws {
        let tree = try Self.tree()
        try await Self.with(tree, PolicyDocument(PolicyKeys.Conditions.kernelLockdown(.block))) { fixture in
            try await fixture.run { host, _, _ throws in
                try host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "t"))
            }
            _ = try await Self.get(fixture)
            let (revoked, blocked) = try await fixture.run { host, posture, _ -> ([String], String?) in
                do throws(CordonError) {
                    try posture.checkNotBlocked("com.example.notes")
                    return (host.revokedForPosture, nil)
                } catch {
                    return (host.revokedForPosture, error.varlinkName)
                }
            }
            #expect(revoked == ["com.example.notes"])
            #expect(blocked == "io.cordon.App.PostureRefused")

            // The kernel is locked down now: the next reading gives the key back.
            try tree.write("sys/kernel/security/lockdown", "none [integrity] confidentiality\n")
            try await fixture.run { host, _, _ in host.now += PostureComponent.freshness }
            let checks = try await Self.get(fixture)
            #expect(checks.first { $0.check == .kernelLockdown }?.status == .pass)
            try await fixture.run { _, posture, _ throws in try posture.checkNotBlocked("com.example.notes") }
            let audit = try await fixture.run { host, _, _ in host.audit.map { $0.action ?? "" } }
            #expect(audit == ["posture.revoke", "posture.restore"])
        }
    }
}
