import CordonProtocol
import CordonStore
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `AuditLogComponent` against a fake host: records written in group commits to the real store
/// and queried back from it, and `Follow` streaming the history, then what is written after
/// (docs/ARCHITECTURE.md, "Components").
@Suite struct AuditLogComponentTests {
    typealias Fixture = ComponentFixture<AuditLogComponent>

    static func with(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(make: { AuditLogComponent(host: $0) }, body)
    }

    static func record(_ appId: String, _ action: String, at time: Double) -> AuditEntry {
        AuditEntry(time: time, category: .decision, appId: appId, action: action, outcome: "deny", reason: "test")
    }

    /// Writes `records` through the component and waits until they are stored.
    static func write(_ records: [AuditEntry], in fixture: Fixture) async throws {
        try await fixture.run { _, log, _ in log.write(records) }.get()
    }

    @Test func writtenRecordsAreQueriedBackFromTheStore() async throws {
        try await Self.with { fixture in
            try await Self.write(
                [
                    Self.record("com.example.notes", "pasteboard.copy", at: 10),
                    Self.record("com.example.mail", "document.send", at: 20),
                ], in: fixture)
            try await Self.write([Self.record("com.example.notes", "document.save", at: 30)], in: fixture)
            // In the store itself, with ids in order.
            let stored = try await fixture.run { host, _, _ throws in
                try host.database.queryAudit(AuditQuery(since: nil, appId: nil, limit: 10))
            }
            #expect(stored.map(\.action) == ["pasteboard.copy", "document.send", "document.save"])
            #expect(stored.map(\.id) == stored.map(\.id).sorted())
            #expect(Set(stored.map(\.id)).count == 3)

            let notes = try await fixture.call(.queryAudit, ["appId": .string("com.example.notes")]) {
                try $0.serve(.query, $1)
            }
            let actions = notes["parameters"]?["records"].map(Self.actions)
            #expect(actions == ["pasteboard.copy", "document.save"])

            let recent = try await fixture.call(.queryAudit, ["since": .int(15), "limit": .int(1)]) {
                try $0.serve(.query, $1)
            }
            #expect(recent["parameters"]?["records"].map(Self.actions) == ["document.save"])
            #expect(try await fixture.run { _, log, _ in log.problem == nil })
        }
    }

    @Test func followWithoutMoreIsRefused() async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(.followAudit) { try $0.serve(.follow, $1) }
            #expect(reply["error"] == .string("org.varlink.service.ExpectedMore"))
            // No follower was added: a record written now goes to nobody.
            try await Self.write([Self.record("com.example.notes", "pasteboard.copy", at: 1)], in: fixture)
            #expect(try await fixture.run { host, _, _ in host.delivered.isEmpty })
        }
    }

    @Test func followSendsTheHistoryThenNewRecordsOfItsApp() async throws {
        try await Self.with { fixture in
            try await Self.write(
                [
                    Self.record("com.example.notes", "pasteboard.copy", at: 1),
                    Self.record("com.example.mail", "document.send", at: 2),
                ], in: fixture)
            _ = try await fixture.call(.followAudit, ["appId": .string("com.example.notes")], from: 2, more: true) {
                try $0.serve(.follow, $1)
            }
            // Written after the history's query on the serial store pool: streamed after it.
            try await Self.write(
                [
                    Self.record("com.example.mail", "document.receive", at: 3),
                    Self.record("com.example.notes", "document.save", at: 4),
                ], in: fixture)
            let delivered = try await fixture.run { host, _, _ throws in
                try host.delivered.map { ($0.0, try Fixture.json($0.1)) }
            }
            #expect(delivered.map { $0.0 } == [2, 2])
            #expect(delivered.map { $0.1["continues"] } == [.bool(true), .bool(true)])
            let actions = delivered.map { $0.1["parameters"]?["record"]?["action"] }
            #expect(actions == [.string("pasteboard.copy"), .string("document.save")])
            // A closed follower gets nothing more.
            try await fixture.run { _, log, _ in log.connectionClosed(2) }
            try await Self.write([Self.record("com.example.notes", "pasteboard.paste", at: 5)], in: fixture)
            #expect(try await fixture.run { host, _, _ in host.delivered.count } == 2)
        }
    }

    static func actions(_ records: JSONValue) -> [String] {
        guard case .array(let items) = records else { return [] }
        return items.compactMap {
            if case .string(let action) = $0["action"] { return action }
            return nil
        }
    }
}
