import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `DecisionsComponent` against a fake host: `io.cordon.App.Check` decided by the real policy for
/// the caller's registration, every deny audited with the rules that said so, allows only when
/// `auditAllows` (docs/ARCHITECTURE.md, "Components").
@Suite struct DecisionsComponentTests {
    typealias Fixture = ComponentFixture<DecisionsComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)

    /// Connection 1 is the managed `com.example.notes`.
    static func with(
        _ document: PolicyDocument = PolicyDocument(), auditAllows: Bool = false,
        _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(document, admin)],
            configure: { host in
                host.configuration.auditAllows = auditAllows
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "a"))
            }, make: { DecisionsComponent(host: $0) }, body)
    }

    static func check(_ action: String, target: String? = nil, in fixture: Fixture) async throws -> JSONValue {
        var parameters: [String: JSONValue] = ["action": .string(action)]
        if let target { parameters["target"] = .string(target) }
        return try await fixture.call(.check, parameters) { try $0.serveCheck($1) }
    }

    @Test func aDenyIsAuditedWithTheRulesThatSaidSo() async throws {
        let document = PolicyDocument(PolicyKeys.Documents.saveCopies(.block))
        let tree = try TemporaryTree()
        try await Self.with(document) { fixture in
            let reply = try await Self.check("document.save", target: tree.root + "/report.txt", in: fixture)
            let decision = reply["parameters"]?["decision"]
            #expect(decision?["allowed"] == .bool(false))
            let rule = "/etc/cordon/policy.d/test.json#/documents/saveCopies"
            #expect(decision?["rules"] == .array([.string(rule)]))
            let audit = try await fixture.run { host, _, _ in host.audit }
            #expect(audit.count == 1)
            #expect(audit.first?.category == .decision)
            #expect(audit.first?.appId == "com.example.notes")
            #expect(audit.first?.action == "document.save")
            #expect(audit.first?.outcome == "deny")
            #expect(audit.first?.rules == [rule])
        }
    }

    @Test func anAllowIsNotAuditedUnlessAuditAllowsSaysSo() async throws {
        try await Self.with { fixture in
            let reply = try await Self.check("pasteboard.copy", in: fixture)
            #expect(reply["parameters"]?["decision"]?["allowed"] == .bool(true))
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
        try await Self.with(auditAllows: true) { fixture in
            let reply = try await Self.check("pasteboard.copy", in: fixture)
            #expect(reply["parameters"]?["decision"]?["allowed"] == .bool(true))
            let audit = try await fixture.run { host, _, _ in
                host.audit.map { [$0.action, $0.outcome, $0.appId] as [String?] }
            }
            #expect(audit == [["pasteboard.copy", "allow", "com.example.notes"]])
        }
    }

    /// `document.save` is decided on the directory's real path: neither `..` nor a symlinked
    /// directory leads out of `saveLocations`, and a directory that does not resolve is denied.
    @Test func documentSaveIsDecidedOnTheCanonicalDestination() async throws {
        let base = try TemporaryTree()
        try base.directory("work")
        try base.directory("other")
        try FileManager.default.createSymbolicLink(
            atPath: base.root + "/work/link", withDestinationPath: base.root + "/other")
        let document = PolicyDocument(PolicyKeys.Documents.saveLocations([base.root + "/work/**"]))
        try await Self.with(document) { fixture in
            func allowed(_ target: String) async throws -> JSONValue? {
                try await Self.check("document.save", target: target, in: fixture)["parameters"]?["decision"]?[
                    "allowed"]
            }
            #expect(try await allowed(base.root + "/work/report.txt") == .bool(true))
            #expect(try await allowed(base.root + "/work/../other/report.txt") == .bool(false))
            #expect(try await allowed(base.root + "/work/./link/report.txt") == .bool(false))
            let missing = try await Self.check("document.save", target: base.root + "/gone/report.txt", in: fixture)
            #expect(missing["parameters"]?["decision"]?["allowed"] == .bool(false))
            // Three denies, each audited.
            let outcomes = try await fixture.run { host, _, _ in host.audit.map(\.outcome) }
            #expect(outcomes == ["deny", "deny", "deny"])
        }
    }

    @Test(arguments: ["no.such.action", "app.register"])
    func anUnknownActionIsRefused(action: String) async throws {
        try await Self.with { fixture in
            let reply = try await Self.check(action, in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.UnknownAction"))
            #expect(reply["parameters"]?["action"] == .string(action))
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
    }

    @Test func anUnregisteredCallerIsDecidedAsAnUnmanagedNobody() async throws {
        try await Self.with { fixture in
            let facts = try await fixture.run { _, decisions, connections throws in
                decisions.appFacts(of: try #require(connections[2]))
            }
            #expect(facts == AppFacts(id: "", managed: false))
        }
    }
}
