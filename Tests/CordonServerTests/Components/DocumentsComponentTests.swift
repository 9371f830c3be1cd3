import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSystem
import Foundation
import Testing

@testable import CordonServer

/// `DocumentsComponent` against a fake host: a share needs a verified registration and its view of
/// the filesystem, the real policy decides `document.send` and `document.receive` on the snapshot,
/// and only a waiting document is opened (docs/ARCHITECTURE.md, "Document hand-over").
@Suite struct DocumentsComponentTests {
    typealias Fixture = ComponentFixture<DocumentsComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)
    static let notes = AppRegistration(
        connection: 1, appId: "com.example.notes", pid: Int(getpid()), executable: "/usr/bin/notes", managed: true,
        token: "a")

    /// Connection 1 is the managed `com.example.notes` (this process); connection 2 registered nothing.
    static func with(
        _ document: PolicyDocument = PolicyDocument(), _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(document, admin)], configure: { host in try? host.register(Self.notes) },
            make: { DocumentsComponent(host: $0) }
        ) { fixture in
            try await body(fixture)
            try await fixture.run { _, documents, _ in documents.shutdown() }
        }
    }

    /// Tells the component that `notes` registered as this process, so that it opens its view.
    static func openView(_ fixture: Fixture) async throws {
        try await fixture.run { _, documents, _ throws in
            let own = PeerIdentity(pid: getpid(), uid: getuid(), gid: getgid(), executable: "/usr/bin/notes")
            let process = AppProcess(
                identity: own, pidfd: Pidfd(pid: getpid()), onBehalf: false, fingerprint: nil,
                directory: nil)
            documents.registered(Self.notes, process: process)
        }
    }

    static func share(_ path: String, from id: ConnectionID = 1, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(
            .shareDocument, ["path": .string(path), "target": .string("com.example.mail")], from: id
        ) { try $0.serveShare($1) }
    }

    @Test func anUnregisteredSenderIsRefusedBeforeAnyDecision() async throws {
        let tree = try TemporaryTree()
        try tree.write("minutes.txt", "the minutes\n")
        try await Self.with { fixture in
            let reply = try await Self.share(tree.root + "/minutes.txt", from: 2, in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
            #expect(try await fixture.run { host, _, _ in host.decisions.isEmpty && host.audit.isEmpty })
        }
    }

    @Test func aSenderWhoseViewIsUnknownIsDeniedAndAudited() async throws {
        let tree = try TemporaryTree()
        try tree.write("minutes.txt", "the minutes\n")
        try await Self.with { fixture in
            let reply = try await Self.share(tree.root + "/minutes.txt", in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.Denied"))
            #expect(reply["parameters"]?["action"] == .string("document.send"))
            let audit = try await fixture.run { host, _, _ in
                host.audit.map { [$0.appId, $0.action, $0.outcome] as [String?] }
            }
            #expect(audit == [["com.example.notes", "document.send", "deny"]])
            #expect(try await fixture.run { host, _, _ in host.decisions.isEmpty })
        }
    }

    @Test func thePolicyDecidesOnTheSnapshot() async throws {
        let tree = try TemporaryTree()
        try tree.write("minutes.txt", "the minutes\n")
        let document = PolicyDocument(PolicyKeys.Documents.sendTo(.none))
        try await Self.with(document) { fixture in
            try await Self.openView(fixture)
            let reply = try await Self.share(tree.root + "/minutes.txt", in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.Denied"))
            #expect(reply["parameters"]?["rules"] == .array([.string(Self.admin.path + "#/documents/sendTo")]))
            let decisions = try await fixture.run { host, _, _ in
                host.decisions.map { "\($0.action.rawValue) \($0.allowed)" }
            }
            #expect(decisions == ["document.send false"])
        }
    }

    @Test func anAllowedShareToATargetThatIsNotRunningIsRefused() async throws {
        let tree = try TemporaryTree()
        try tree.write("minutes.txt", "the minutes\n")
        try await Self.with { fixture in
            try await Self.openView(fixture)
            let reply = try await Self.share(tree.root + "/minutes.txt", in: fixture)
            #expect(reply["error"] == .string("io.cordon.App.TargetNotRunning"))
            #expect(reply["parameters"]?["appId"] == .string("com.example.mail"))
            let decisions = try await fixture.run { host, _, _ in
                host.decisions.map { "\($0.action.rawValue) \($0.allowed)" }
            }
            #expect(decisions == ["document.send true", "document.receive true"])
        }
    }

    @Test func openingADocumentThatDoesNotWaitIsDenied() async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(.openDocument, ["id": .string("no-such-document")]) {
                try $0.serveOpen($1)
            }
            #expect(reply["error"] == .string("io.cordon.App.Denied"))
            #expect(reply["parameters"]?["action"] == .string("document.receive"))
            #expect(
                reply["parameters"]?["reason"]
                    == .string("no document no-such-document waits for com.example.notes"))
            let unregistered = try await fixture.call(.openDocument, ["id": .string("x")], from: 2) {
                try $0.serveOpen($1)
            }
            #expect(unregistered["error"] == .string("io.cordon.App.NotRegistered"))
        }
    }
}
