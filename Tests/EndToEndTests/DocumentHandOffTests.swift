import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Sharing and saving documents through CordonKit, decided by the real daemon's policy.
@Suite struct DocumentHandOffTests {
    static func start(policy: String? = nil) async throws -> (DaemonProcess, CordonApp, CordonApp) {
        let root = try TemporaryDirectory()
        if let policy {
            try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
            try policy.write(toFile: root.appending("admin/documents.json"), atomically: true, encoding: .utf8)
        }
        let daemon = try await DaemonProcess.started(root: root)
        let sender = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let receiver = try await CordonApp.connect(appId: "com.example.viewer", socketPath: daemon.socketPath)
        return (daemon, sender, receiver)
    }

    static func document(in daemon: DaemonProcess) throws -> String {
        let path = daemon.root.appending("report.pdf")
        try Data("%PDF-1.7".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aSharedDocumentReachesTheRunningTarget() async throws {
        let (daemon, sender, receiver) = try await Self.start()
        defer { daemon.cleanUp() }
        var events = receiver.events.makeAsyncIterator()
        #expect(await events.next()?.kind == .state)
        let path = try Self.document(in: daemon)
        try await sender.share(file: path, with: "com.example.viewer", contentType: "application/pdf")
        let event = try #require(await events.next())
        #expect(event.kind == .openDocument)
        let document = try #require(event.document)
        #expect(document.path == path)
        #expect(document.contentType == "application/pdf")
        #expect(document.sender == "com.example.notes")
        // The receiver reads it through the descriptor the agent opened, not by its path.
        let handle = try await receiver.openDocument(document)
        #expect(try handle.readToEnd() == Data("%PDF-1.7".utf8))
        try handle.close()

        await #expect(throws: CordonError.targetNotRunning(appId: "com.example.absent")) {
            try await sender.share(file: path, with: "com.example.absent")
        }
        await sender.close()
        await receiver.close()
        try await daemon.stop()
    }

    @Test func thePolicyRefusesOnEitherEnd() async throws {
        let policy = #"""
            {"schema": "cordon.policy.v1", "documents": {"sendTo": "any", "receiveFrom": "any", "blockedTypes": [".exe"]},
             "overrides": [{"apps": ["com.example.viewer"], "documents": {"receiveFrom": "none"}},
                           {"apps": ["com.example.notes"], "documents": {"sendTo": "managed", "allowedTargets": ["com.example.mail"]}}]}
            """#
        let (daemon, sender, receiver) = try await Self.start(policy: policy)
        defer { daemon.cleanUp() }
        let path = try Self.document(in: daemon)
        do {
            try await sender.share(file: path, with: "com.example.viewer")
            Issue.record("sending to an app outside allowedTargets was allowed")
        } catch CordonError.denied(let action, _, let rules) {
            #expect(action == "document.send")
            #expect(rules.contains { $0.contains("documents.json#/overrides/1/documents") }, "\(rules)")
        }
        // The viewer may send (sendTo any) and notes may receive (receiveFrom any).
        try await receiver.share(file: path, with: "com.example.notes")
        let mail = try await CordonApp.connect(appId: "com.example.mail", socketPath: daemon.socketPath)
        do {
            try await mail.share(file: path, with: "com.example.viewer")
            Issue.record("the viewer receives from no one")
        } catch CordonError.denied(let action, _, _) {
            #expect(action == "document.receive")
        }
        let audit = try await daemon.client().audit()
        #expect(audit.filter { $0.outcome == "deny" }.map(\.action) == ["document.send", "document.receive"])
        await mail.close()
        await sender.close()
        await receiver.close()
        try await daemon.stop()
    }

    @Test func saveWritesOnlyWhereThePolicyAllows() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let allowed = root.appending("allowed")
        try FileManager.default.createDirectory(atPath: allowed, withIntermediateDirectories: true)
        let policy = #"{"schema": "cordon.policy.v1", "documents": {"saveLocations": ["\#(allowed)/**"]}}"#
        let (daemon, app, other) = try await Self.start(policy: policy)
        defer { daemon.cleanUp() }
        let inside = allowed + "/note.txt"
        try await app.save(Data("hello".utf8), to: inside, contentType: "text/plain")
        #expect(try String(contentsOfFile: inside, encoding: .utf8) == "hello")
        let mode = try FileManager.default.attributesOfItem(atPath: inside)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let outside = root.appending("elsewhere.txt")
        do {
            try await app.save(Data("leak".utf8), to: outside)
            Issue.record("saving outside saveLocations was allowed")
        } catch CordonError.denied(let action, _, let rules) {
            #expect(action == "document.save")
            #expect(rules.contains { $0.contains("/documents/saveLocations") }, "\(rules)")
        }
        #expect(!FileManager.default.fileExists(atPath: outside))
        await app.close()
        await other.close()
        try await daemon.stop()
    }
}
